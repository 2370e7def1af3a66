/**
 * `WebhookDestination`: POSTs each payload to every configured URL in parallel, signs it, and
 * retries it within the retry window until one URL accepts it.
 *
 * Outcome of one attempt, per URL: 2xx succeeds; timeouts, network errors, 408, 429 and 5xx are
 * retryable; anything else (other 4xx, 3xx since redirects are not followed, a refused TLS
 * certificate) is final for that URL. The message is delivered as soon as any URL answers 2xx.
 * When no URL did, the message is retried if at least one URL's failure is retryable, and the
 * retry goes only to those URLs: a URL that answered 400 is not asked again, while its neighbour
 * that answered 503 is. When every URL failed for good, delivery fails at once.
 */
import {
  AbortedError,
  ClientClosedError,
  HttpError,
  NetworkError,
  ValidationError,
  isAnalyticsError,
  type AnalyticsError,
} from '../errors.js'
import { Emitter } from '../emitter.js'
import { attemptRequest, discardBody } from '../transport/attempt.js'
import { retry } from '../transport/retry.js'
import { parseRetryAfter } from '../transport/retry-after.js'
import { classifyStatus, isRetryableError } from '../transport/retry-policy.js'
import {
  resolveDestinationOptions,
  type ResolvedDestinationOptions,
  type WebhookDestinationOptions,
} from './options.js'
import { SIGNATURE_HEADER, signSync } from './signature.js'

/** One URL's outcome: a status, an error, or (when another URL already succeeded) `pending`. */
export interface UrlResult {
  url: string
  /** The attempt this outcome comes from, from 1 (0: never attempted). */
  attempt: number
  /** The HTTP status, when the URL answered. */
  status?: number
  /** Why this URL did not accept the message: `HttpError`, `TimeoutError`, `NetworkError`, `TlsError`… */
  error?: AnalyticsError
  /** Still answering when another URL accepted the message; it completes in the background. */
  pending?: true
}

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

export interface WebhookDestinationEvents {
  /** An attempt starts: the URLs it POSTs to. */
  attempt: { payload: object; attempt: number; urls: string[] }
  /** An attempt failed and another will start after `delayMs`. */
  retry: { payload: object; attempt: number; delayMs: number; results: UrlResult[]; error: AnalyticsError }
  /** `url` answered `status` (2xx): the message is delivered. */
  delivered: { payload: object; attempt: number; url: string; status: number; results: UrlResult[] }
  /** The message failed for good (final answers, retry window spent, or `close()`). */
  failed: { payload: object; attempts: number; results: UrlResult[]; error: AnalyticsError }
}

interface Delivery {
  readonly payload: object
  readonly body: string
  readonly headers: ReadonlyArray<Readonly<Record<string, string>>>
  results: UrlResult[]
  /** Indexes of the URLs the next attempt goes to. */
  active: number[]
  attempts: number
  deliveredBy: number
  error?: AnalyticsError
}

const retryAfterOf = (error: AnalyticsError | undefined): number =>
  (error as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? -1

export class WebhookDestination {
  readonly #options: ResolvedDestinationOptions
  readonly #events = new Emitter<WebhookDestinationEvents>()
  readonly #closing = new AbortController()
  readonly #pending = new Set<Promise<DeliveryResult>>()
  #closed = false

  /** Validates every option; throws `ConfigError` naming the first problem. */
  constructor(options: WebhookDestinationOptions) {
    this.#options = resolveDestinationOptions(options)
  }

  /** The configured URLs, in order. */
  get urls(): string[] {
    return this.#options.targets.map((target) => target.url)
  }

  /** Deliveries that have not resolved yet (in flight or waiting to retry). */
  get pendingCount(): number {
    return this.#pending.size
  }

  on<K extends keyof WebhookDestinationEvents>(event: K, listener: (info: WebhookDestinationEvents[K]) => void): this {
    this.#events.on(event, listener)
    return this
  }

  off<K extends keyof WebhookDestinationEvents>(event: K, listener: (info: WebhookDestinationEvents[K]) => void): this {
    this.#events.off(event, listener)
    return this
  }

  /**
   * Serialises `payload` once, signs that string, and POSTs it until delivered or failed for
   * good. Resolves with the outcome; never rejects (a payload that cannot be serialised, or a
   * call after `close()`, resolves with `delivered: false` and the error).
   */
  deliver(payload: object): Promise<DeliveryResult> {
    const promise = this.#deliver(payload)
    this.#pending.add(promise)
    void promise.then(() => this.#pending.delete(promise))
    return promise
  }

  /**
   * Stops pending retries: their `deliver()` promises resolve with `delivered: false` and an
   * `AbortedError`. Requests already on the wire finish (within `timeout`) but are not retried.
   * Resolves once every delivery has resolved. Safe to call twice.
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true
      this.#closing.abort(new AbortedError('WebhookDestination closed: pending retries were cancelled.'))
    }
    await Promise.all([...this.#pending])
  }

  async #deliver(payload: object): Promise<DeliveryResult> {
    const { targets, sharedSecret, backoff, retryWindow, now, random } = this.#options
    const unattempted = (error: AnalyticsError): UrlResult[] => targets.map(({ url }) => ({ url, attempt: 0, error }))
    if (this.#closed) {
      const error = new ClientClosedError('deliver')
      return this.#fail(payload, 0, unattempted(error), error)
    }
    let body: string
    try {
      const json: unknown = JSON.stringify(payload)
      if (typeof json !== 'string') throw new TypeError('JSON.stringify returned nothing')
      body = json
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause)
      const error = new ValidationError('payload', `Expected the payload to serialise to JSON: ${reason}.`, { cause })
      return this.#fail(payload, 0, unattempted(error), error)
    }
    const signature = sharedSecret === undefined ? undefined : signSync(body, sharedSecret)
    const delivery: Delivery = {
      payload,
      body,
      headers: targets.map((t) => (signature ? { ...t.headers, [SIGNATURE_HEADER]: signature } : t.headers)),
      results: targets.map(({ url }) => ({ url, attempt: 0 })),
      active: targets.map((_, i) => i),
      attempts: 0,
      deliveredBy: -1,
    }
    let stoppedBy: unknown
    try {
      await retry(
        async (n) => {
          delivery.attempts = n
          await this.#attempt(delivery, n)
          if (delivery.deliveredBy < 0) throw delivery.error
        },
        {
          // A zero window means no retry at all (not "retries with zero delay").
          retries: retryWindow === 0 ? 0 : Number.POSITIVE_INFINITY,
          backoff,
          windowMs: retryWindow,
          signal: this.#closing.signal,
          now,
          random,
          isRetryable: (error) => !this.#closed && delivery.active.length > 0 && isRetryableError(error),
          onRetry: ({ attempt, delayMs }) =>
            this.#events.emit('retry', {
              payload,
              attempt,
              delayMs,
              results: delivery.results.map((r) => ({ ...r })),
              error: delivery.error!,
            }),
        },
      )
    } catch (error) {
      stoppedBy = error
    }
    // The delivery record, not what p-retry returned or threw, is the source of truth: p-retry
    // turns a success that lands just as `close()` aborts into a throw.
    const results = delivery.results.map((r) => ({ ...r }))
    if (delivery.deliveredBy >= 0) {
      const { url, status } = results[delivery.deliveredBy]
      this.#events.emit('delivered', { payload, attempt: delivery.attempts, url, status: status!, results })
      return { delivered: true, attempts: delivery.attempts, results }
    }
    // Stopped by close(): while waiting to retry, or after an attempt that would have been retried.
    const cancelled =
      this.#closing.signal.aborted &&
      (stoppedBy === this.#closing.signal.reason || (delivery.active.length > 0 && isRetryableError(delivery.error)))
    const error = cancelled
      ? new AbortedError('WebhookDestination closed before the message was delivered; its retry was cancelled.', {
          cause: delivery.error,
        })
      : (delivery.error ?? new AbortedError('Delivery stopped before any attempt.', { cause: stoppedBy }))
    return this.#fail(payload, delivery.attempts, results, error)
  }

  #fail(payload: object, attempts: number, results: UrlResult[], error: AnalyticsError): DeliveryResult {
    this.#events.emit('failed', { payload, attempts, results, error })
    return { delivered: false, attempts, results, error }
  }

  /**
   * One attempt: POST to every active URL in parallel. Settles as soon as one answers 2xx (the
   * others complete in the background and are reported `pending`), or once all have answered.
   */
  #attempt(delivery: Delivery, n: number): Promise<void> {
    const { targets } = this.#options
    const active = delivery.active
    this.#events.emit('attempt', { payload: delivery.payload, attempt: n, urls: active.map((i) => targets[i].url) })
    const results = delivery.results.slice()
    for (const i of active) results[i] = { url: targets[i].url, attempt: n, pending: true }
    return new Promise<void>((resolve) => {
      let remaining = active.length
      let settled = false
      const settle = () => {
        settled = true
        delivery.results = results.slice()
        resolve()
      }
      for (const i of active) {
        void this.#send(targets[i].url, delivery.headers[i], delivery.body).then((outcome) => {
          if (settled) return
          results[i] = { url: targets[i].url, attempt: n, ...outcome }
          remaining--
          if (outcome.error === undefined) {
            delivery.deliveredBy = i
            settle()
          } else if (remaining === 0) {
            this.#concludeFailedAttempt(delivery, results, active)
            settle()
          }
        })
      }
    })
  }

  /**
   * After an attempt where no URL succeeded: the next attempt goes to the URLs whose failure is
   * retryable, and the attempt's error is the one that decides what happens next: a retryable one
   * if any (the longest Retry-After, so every URL's wish is honoured), else the first final one.
   */
  #concludeFailedAttempt(delivery: Delivery, results: UrlResult[], active: readonly number[]): void {
    const retryable = active.filter((i) => isRetryableError(results[i].error))
    delivery.active = retryable
    if (retryable.length > 0) {
      delivery.error = retryable
        .map((i) => results[i].error!)
        .reduce((a, b) => (retryAfterOf(b) > retryAfterOf(a) ? b : a))
    } else {
      delivery.error = results[active[0]].error
    }
  }

  async #send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<Omit<UrlResult, 'url' | 'attempt'>> {
    const { fetch, timeout, now } = this.#options
    try {
      const response = await attemptRequest(fetch, { url, headers: headers as Record<string, string>, body, timeoutMs: timeout })
      void discardBody(response)
      const { status } = response
      if (classifyStatus(status) === 'success') return { status }
      const redirect = status === 0 || (status >= 300 && status < 400)
      // Uncapped: a Retry-After that reaches past the retry window ends the retrying instead of
      // being cut short (the retry loop never sleeps past the window).
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Number.MAX_SAFE_INTEGER, now())
      const message = redirect
        ? `${url} answered with a redirect (${status}); redirects are not followed.`
        : `${url} answered ${status}${response.statusText ? ` ${response.statusText}` : ''}.`
      return { status, error: new HttpError(status, message, retryAfterMs === undefined ? {} : { retryAfterMs }) }
    } catch (error) {
      if (isAnalyticsError(error)) return { error }
      const reason = error instanceof Error ? error.message : String(error)
      return { error: new NetworkError(`Request to ${url} failed: ${reason}`, { cause: error }) }
    }
  }
}
