/**
 * Runs an attempt function until it succeeds, fails with a final error, runs out of retries or
 * of its retry window, or is aborted. The loop is p-retry's; the delays are ours (full jitter,
 * never shorter than Retry-After), slept on a background timer so a pending retry never keeps a
 * process alive.
 */
import pRetry from 'p-retry'
import { isAnalyticsError } from '../errors.js'
import { sleep } from '../platform/runtime.js'
import { isRetryableError, retryDelay, type BackoffOptions } from './retry-policy.js'

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
  signal?: AbortSignal
  now?: () => number
  random?: () => number
  isRetryable?: (error: unknown) => boolean
  /**
   * The backoff exponent for retry number `retry` (default: `retry` itself, i.e. the delay's
   * ceiling doubles with every retry of this request).
   */
  exponent?: (retry: number) => number
  onRetry?: (info: RetryInfo) => void
}

/** The error a retry loop gives up with carries how many attempts were made. */
export function attemptsOf(error: unknown): number | undefined {
  return (error as { attempts?: number } | undefined)?.attempts
}

export async function retry<T>(attempt: (n: number) => Promise<T>, options: RetryOptions): Promise<T> {
  const now = options.now ?? Date.now
  const random = options.random ?? Math.random
  const isRetryable = options.isRetryable ?? isRetryableError
  const start = now()
  let willRetry = false
  let attempts = 0
  try {
    return await pRetry(
      async (n) => {
        attempts = n
        return attempt(n)
      },
      {
        retries: options.retries,
        // The wait is slept in onFailedAttempt (below), so p-retry's own delay is zero.
        factor: 1,
        minTimeout: 0,
        maxTimeout: 0,
        randomize: false,
        maxRetryTime: Number.POSITIVE_INFINITY,
        unref: true,
        signal: options.signal,
        shouldConsumeRetry: () => true,
        shouldRetry: () => willRetry,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          willRetry = false
          if (retriesLeft <= 0 || !isRetryable(error)) return
          const retryAfterMs = isAnalyticsError(error) ? (error as { retryAfterMs?: number }).retryAfterMs : undefined
          const exponent = options.exponent ? options.exponent(attemptNumber) : attemptNumber
          const delayMs = retryDelay(exponent, options.backoff, random(), retryAfterMs)
          if (options.windowMs !== undefined && now() + delayMs - start > options.windowMs) return
          willRetry = true
          options.onRetry?.({ attempt: attemptNumber, error, delayMs })
          await sleep(delayMs, options.signal)
        },
      },
    )
  } catch (error) {
    if (error && typeof error === 'object') (error as { attempts?: number }).attempts = attempts
    throw error
  }
}
