/**
 * The error a failed `deliver()` resolves with (and its `'failed'` event carries). When every URL
 * failed for good, that is the last attempt's own error. When retrying stopped for another
 * reason, the error says which, keeping the last attempt's error as its `cause`:
 * - `close()` cancelled the retry, or the request then on the wire (`cancelRequests`): an
 *   `AbortedError`;
 * - the retry window ran out, or a Retry-After reaches past it: an error of the same class, code,
 *   status and Retry-After as the last attempt's (callers branch on those), its message extended
 *   with why nothing was retried.
 */
import { AbortedError, AnalyticsError } from '../errors.js'
import { count } from '../logger.js'
import { isRetryableError } from '../transport/retry-policy.js'
import type { StopSignal } from '../transport/stop.js'
import { retryAfterOf } from './attempt.js'

export interface DeliveryEnd {
  /** The last attempt's deciding error (none when no attempt ran). */
  error: AnalyticsError | undefined
  /** Indexes of the URLs worth another attempt after the last one. */
  active: readonly number[]
  /** `close()`'s signal: aborted once it was called (none: a scheduler of its own, see `failure`). */
  closing?: StopSignal
  /** What the retry loop threw. */
  stoppedBy: unknown
  retryWindow: number
  /** ms from the first attempt's start until now. */
  elapsed: number
}

export function finalError(end: DeliveryEnd): AnalyticsError {
  const { error, closing, retryWindow } = end
  const retryable = end.active.length > 0 && isRetryableError(error)
  // Stopped by close(): while waiting to retry, or after an attempt that would have been retried.
  if (closing?.aborted && (end.stoppedBy === closing.reason || retryable)) {
    return new AbortedError('WebhookDestination closed before the message was delivered; its retry was cancelled.', { cause: error })
  }
  // Its request on the wire was cancelled after close() (`cancelRequests`: the collector's drain ran out).
  if (closing?.aborted && error?.code === 'ABORTED') {
    return new AbortedError('WebhookDestination closed before the message was delivered; its request was cancelled.', { cause: error })
  }
  if (error === undefined) return new AbortedError('Delivery stopped before any attempt.', { cause: end.stoppedBy })
  // A retryable failure the loop gave up on, not closed: only the window ends a loop that way
  // (a zero window means "no retries", which needs no explaining).
  if (!retryable || end.stoppedBy !== error || retryWindow === 0) return error
  const window = `the retry window (${span(retryWindow)} from the first attempt)`
  const retryAfter = retryAfterOf(error)
  const why = retryAfter >= 0 && end.elapsed + retryAfter > retryWindow ? `its Retry-After reaches past ${window}` : `the next would start past ${window}`
  return restated(error, `${error.message.replace(/\.$/, '')}; no retry: ${why}.`)
}

/**
 * Why a retry that came due inside the retry window is not made when it can only start after it
 * (a durable queue's retry due while no process ran): `elapsed` ms after the first attempt.
 */
export function lateRetry(retryWindow: number, elapsed: number): string {
  return `the retry window (${span(retryWindow)} from the first attempt) ended before it could start (${(elapsed / 1000).toFixed(1)} s after the first attempt)`
}

/** `error` with another message and itself as `cause`: a genuine Error of the same class, with its fields. */
function restated(error: AnalyticsError, message: string): AnalyticsError {
  const copy = Object.assign(new AnalyticsError(error.code, message, { cause: error }), error)
  return Object.setPrototypeOf(copy, Object.getPrototypeOf(error) as object) as AnalyticsError
}

/** A duration in words: whole hours, minutes or seconds when it is one, else ms. */
export function span(ms: number): string {
  if (ms % 3_600_000 === 0) return count(ms / 3_600_000, 'hour')
  if (ms % 60_000 === 0) return count(ms / 60_000, 'minute')
  if (ms % 1000 === 0) return count(ms / 1000, 'second')
  return `${ms} ms`
}
