/** What a client reports back: a flush's outcome, its counters, and the events it emits. */
import type { AnalyticsError } from '../errors.js'
import type { SentMessage } from '../message/types.js'

export interface FlushResult {
  delivered: number
  failed: number
}

export interface ClientStats {
  /** Waiting in the queue for the next flush. */
  queued: number
  /** Handed to delivery: being sent, waiting to retry, or waiting for a free connection. */
  inFlight: number
  delivered: number
  failed: number
  /** Refused because `maxQueueSize` messages were already held. */
  dropped: number
  /** Attempts that failed and were retried. */
  retries: number
}

export interface ClientEvents {
  /** A batch was delivered. */
  flush: { messages: SentMessage[]; status: number }
  /** An attempt failed and will be retried. */
  retry: { messages: SentMessage[]; attempt: number; error: AnalyticsError }
  /** Messages failed for good or were dropped. */
  error: AnalyticsError
}
