/** What a client reports back: a flush's outcome, its counters, and the events it emits. */
import type { AnalyticsError } from '../errors.js'
import type { SentMessage } from '../message/types.js'

/**
 * What {@link Client.flush} and {@link Client.close} resolve with: how many of the messages they
 * waited for were delivered and how many failed for good. A `track` refused by its `schema` is not
 * counted here (it never reached delivery): it is reported on `'error'` and in `stats().failed`.
 */
export interface FlushResult {
  /** Messages delivered (a 2xx answer to a batch that held them). */
  delivered: number
  /** Messages that failed for good (each also reported through the `'error'` event). */
  failed: number
}

/** What {@link Client.stats} returns: messages by state since the client was made, and retried attempts. */
export interface ClientStats {
  /** Waiting in the queue for the next flush. */
  queued: number
  /** Handed to delivery: being sent, waiting to retry, or waiting for a free connection. */
  inFlight: number
  /** Delivered: a 2xx answer to a batch that held them. */
  delivered: number
  /** Failed for good (reported through `'error'`), schema refusals included. */
  failed: number
  /** Refused because `maxQueueSize` messages were already held. */
  dropped: number
  /** Attempts that failed and were retried. */
  retries: number
}

/**
 * The events of {@link Client.on}, each name with its listener's payload. The `messages` are
 * parsed back from the JSON that was sent: a `Date` comes back as its ISO string.
 */
export interface ClientEvents {
  /** A batch was delivered. */
  flush: { messages: SentMessage[]; status: number }
  /** An attempt failed and will be retried. */
  retry: { messages: SentMessage[]; attempt: number; error: AnalyticsError }
  /**
   * Messages failed for good or were dropped: an {@link AnalyticsError} (`HttpError`, `NetworkError`,
   * `TimeoutError`, `QueueFullError`, …) whose `messages` are the messages concerned.
   */
  error: AnalyticsError
}
