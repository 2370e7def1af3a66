/**
 * Runs an attempt function until it succeeds, fails with a final error, runs out of retries or
 * of its retry window, or is aborted. The delays are full jitter, never shorter than Retry-After,
 * slept on a background timer so a pending retry never keeps a process alive. (The loop was
 * p-retry's, with every option of it turned off but the loop itself: 1.2 KB gz of the client's
 * 12 KB budget for eight lines.)
 */
import { isAnalyticsError } from '../errors.js'
import { sleep } from './sleep.js'
import { isRetryableError, retryDelay, type BackoffOptions } from './retry-policy.js'
import type { StopSignal } from './stop.js'

export interface RetryInfo {
  /** The attempt that failed, from 1. */
  attempt: number
  error: unknown
  /** How long we wait before the next attempt, ms. */
  delayMs: number
}

export interface RetryOptions {
  /** Retries after the first attempt (may be Infinity when `windowMs` bounds them). */
  retries: number
  backoff: BackoffOptions
  /** No retry is scheduled to start later than this many ms after the first attempt. */
  windowMs?: number
  signal?: StopSignal
  now?: () => number
  random?: () => number
  isRetryable?: (error: unknown) => boolean
  /**
   * The backoff exponent for retry number `retry` (default: `retry` itself, i.e. the delay's
   * ceiling doubles with every retry of this request).
   */
  exponent?: (retry: number) => number
  onRetry?: (info: RetryInfo) => void
  /** How a delay is waited (default: `sleep`, cut short by `signal`). */
  sleep?: (ms: number, signal?: StopSignal) => Promise<unknown>
}

/** The error a retry loop gives up with carries how many attempts were made. */
export function attemptsOf(error: unknown): number | undefined {
  return (error as { attempts?: number } | undefined)?.attempts
}

export async function retry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const start = (options.now ?? Date.now)()
  let made = 0
  for (let n = 1; ; n++) {
    try {
      if (options.signal?.aborted) throw options.signal.reason
      try {
        made = n
        return await attempt(n)
      } catch (error) {
        if (n > options.retries || !(options.isRetryable ?? isRetryableError)(error)) throw error
        // (isRetryableError retries AnalyticsErrors only.)
        const retryAfterMs = isAnalyticsError(error) ? (error as { retryAfterMs?: number }).retryAfterMs : undefined
        const exponent = options.exponent ? options.exponent(n) : n
        const delayMs = retryDelay(exponent, options.backoff, (options.random ?? Math.random)(), retryAfterMs)
        if (options.windowMs !== undefined && (options.now ?? Date.now)() + delayMs - start > options.windowMs) throw error
        options.onRetry?.({ attempt: n, error, delayMs })
        await (options.sleep ?? sleep)(delayMs, options.signal)
      }
    } catch (error) {
      // The error it gives up with (the last attempt's, or the abort's reason) carries the count.
      if (error && typeof error === 'object') (error as { attempts?: number }).attempts = made
      throw error
    }
  }
}
