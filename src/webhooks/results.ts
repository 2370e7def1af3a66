/**
 * What a `WebhookDestination` delivery resolves with, and the events it emits on the way.
 */
import type { AnalyticsError } from '../errors.js'
import type { UrlResult } from './attempt.js'

/**
 * What {@link WebhookDestination.deliver} resolves with: whether the payload was delivered, after
 * how many attempts, each URL's latest outcome, and why it failed when it did.
 */
export interface DeliveryResult {
  /** Whether some URL answered 2xx. */
  delivered: boolean
  /** Attempts made (each attempt POSTs to every URL still worth trying). */
  attempts: number
  /** Each URL's latest outcome, in the order of `urls`. */
  results: UrlResult[]
  /** Why delivery failed, when it did. */
  error?: AnalyticsError
}

/** The events of {@link WebhookDestination.on}, each name with its listener's argument. */
export interface WebhookDestinationEvents {
  /** An attempt starts: the URLs it POSTs to. */
  attempt: { payload: object; attempt: number; urls: string[] }
  /** An attempt failed and another will start after `delayMs`. */
  retry: { payload: object; attempt: number; delayMs: number; results: UrlResult[]; error: AnalyticsError }
  /** `url` answered `status` (2xx): the message is delivered. */
  delivered: { payload: object; attempt: number; url: string; status: number; results: UrlResult[] }
  /** The message failed for good (final answers, retry window spent, or `close()`). */
  failed: { payload: object; attempts: number; results: UrlResult[]; error: AnalyticsError }
  /**
   * `url` was still answering when another URL accepted the message (`pending: true` in the
   * results): its outcome, once it came. It changes nothing: the message is delivered, and this
   * URL is not retried.
   */
  late: { payload: object; attempt: number; url: string; status?: number; error?: AnalyticsError; answer?: string; durationMs?: number }
}
