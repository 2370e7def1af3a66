/**
 * What to do with the outcome of one HTTP attempt, and how long to wait before the next one.
 * Pure: no I/O, no clock, randomness passed in.
 */
import { isAnalyticsError } from '../errors.js'

export type Verdict = 'success' | 'retry' | 'split' | 'fail'

/**
 * 2xx succeeds. 408, 429 and 5xx are retried. 413 means the body was refused for its size:
 * the caller may split it (`split`). Everything else (other 4xx, 3xx: redirects are not followed,
 * 1xx) fails at once.
 */
export function classifyStatus(status: number): Verdict {
  if (status >= 200 && status < 300) return 'success'
  if (status === 408 || status === 429 || (status >= 500 && status < 600)) return 'retry'
  if (status === 413) return 'split'
  return 'fail'
}

/** Network errors and timeouts are retried; HTTP errors by their status; anything else is final. */
export function isRetryableError(error: unknown): boolean {
  if (!isAnalyticsError(error)) return false
  if (error.code === 'NETWORK' || error.code === 'TIMEOUT') return true
  if (error.code === 'HTTP' && typeof error.status === 'number') return classifyStatus(error.status) === 'retry'
  return false
}

export interface BackoffOptions {
  /** Upper bound of the first retry's delay, ms. */
  baseMs: number
  /** Upper bound of any single delay, ms. */
  capMs: number
}

/**
 * Exponential backoff with full jitter: a uniform delay in [0, min(cap, base·2^(retry-1))).
 * `retry` counts from 1. Spreads a crowd of clients that failed together.
 */
export function backoffDelay(retry: number, options: BackoffOptions, random: number): number {
  const ceiling = Math.min(options.capMs, options.baseMs * 2 ** Math.max(0, retry - 1))
  return Math.floor(random * ceiling)
}

/** The wait before retry number `retry`: the jittered backoff, but never less than Retry-After. */
export function retryDelay(
  retry: number,
  options: BackoffOptions,
  random: number,
  retryAfterMs?: number,
): number {
  const jittered = backoffDelay(retry, options, random)
  return retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs)
}
