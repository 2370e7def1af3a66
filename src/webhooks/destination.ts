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
import { AbortedError, ClientClosedError, type AnalyticsError } from '../errors.js'
import { Emitter } from '../emitter.js'
import { count, createLogger, debugEnables } from '../logger.js'
import { readDebugSetting } from '#platform'
import { maskUrl } from '../secrets.js'
import { Stop, type StopSignal } from '../transport/stop.js'
import { retryDelay } from '../transport/retry-policy.js'
import { attemptOnce, type AttemptOutcome, type AttemptTarget, type UrlResult } from './attempt.js'
import type { DeliveryResult, WebhookDestinationEvents } from './results.js'
import {
  resolveDestinationOptions,
  type ResolvedDestinationOptions,
  type WebhookDestinationOptions,
} from './options.js'
import { givenBody, jsonOf } from './body.js'
import { finalError, lateRetry } from './final-error.js'
import { heldWhileAwaited } from './held.js'
import { deliverOnSchedule, type ScheduleContext } from './schedule.js'
import { SIGNATURE_HEADER, signSync } from './signature.js'
import { standardHeaders, webhookIdOf } from './standard.js'

/** Each destination's requests on the wire, for `cancelRequests`. */
const requestsOf = new WeakMap<WebhookDestination, Stop>()

/**
 * Aborts the requests `destination` has on the wire, now, rather than at their `timeout`: their
 * deliveries fail (`AbortedError`, not retried). Not public API: `close()` lets requests on the
 * wire finish, as documented; the collector's bounded drain calls this when its time is up.
 */
export function cancelRequests(destination: WebhookDestination): void {
  requestsOf.get(destination)?.abort()
}

/** Marks the options of a destination the collector makes (`collectorDestination`). */
const FOR_COLLECTOR = Symbol('collector destination')

/**
 * A destination for the collector, which logs each retry and failure itself (naming the source):
 * this one logs only its attempts and deliveries under `analytics:webhooks`, so `DEBUG=analytics`
 * prints each retry and failure once. Not public API.
 */
export function collectorDestination(options: WebhookDestinationOptions, gate?: UrlGate): WebhookDestination {
  const destination = new WebhookDestination({ ...options, [FOR_COLLECTOR]: true } as WebhookDestinationOptions)
  if (gate) gatesOf.set(destination, destination.urls.map((url) => gate.forUrl(url)))
  return destination
}

/**
 * The collector's endpoint health, per URL of a destination: `refused(url)` is asked at each
 * attempt (an error: not sent, that error its final outcome); `observe` is told each outcome of a
 * request sent. Not public API.
 */
export interface UrlGate {
  /** The checks of one URL, made once per destination. */
  forUrl(url: string): Required<Pick<AttemptTarget, 'refused' | 'observe'>>
}

/** Each collector destination's checks, one per URL in order (`collectorDestination`). */
const gatesOf = new WeakMap<WebhookDestination, ReadonlyArray<Required<Pick<AttemptTarget, 'refused' | 'observe'>>>>()

/**
 * Sends payloads to 1 to 5 webhook URLs: each payload is serialised once, signed (`X-Signature`,
 * with `sharedSecret`) and POSTed to every URL in parallel; it is delivered as soon as one URL
 * answers 2xx. Timeouts, network errors, 408, 429 and 5xx are retried with jittered backoff within
 * `retryWindow` (4 hours by default), to the URLs that failed that way only; other answers are
 * final. {@link WebhookDestination.deliver} resolves with the outcome and never rejects.
 *
 * @example
 * ```ts
 * import { WebhookDestination, toWebhookPayload } from 'isomorphic-analytics/webhooks'
 *
 * const destination = new WebhookDestination({
 *   urls: [{ url: 'https://hooks.example.com/analytics', headers: { Authorization: 'Bearer YOUR_TOKEN' } }],
 *   sharedSecret: process.env.WEBHOOK_SECRET,
 * })
 * destination.on('failed', ({ results, error }) => console.error(error.message, results))
 * const message = { type: 'track', userId: 'user-1', event: 'Order Completed', properties: { total: 42.5 } }
 * const result = await destination.deliver(toWebhookPayload(message))
 * // { delivered: true, attempts: 1, results: [{ url, attempt: 1, status: 200 }] }
 * await destination.close()
 * ```
 */
export class WebhookDestination {
  readonly #options: ResolvedDestinationOptions
  readonly #events = new Emitter<WebhookDestinationEvents>(['attempt', 'retry', 'delivered', 'failed', 'late'])
  /**
   * Ends the retry waits at `close()`. A `Stop`, not an `AbortController`: every delivery waiting
   * to retry listens to it, and an `AbortSignal` warns of a leak past ten listeners.
   */
  readonly #closing = new Stop()
  /** Aborts the requests on the wire: `cancelRequests`, never `close()`. */
  readonly #requests = new Stop()
  readonly #pending = new Set<Promise<DeliveryResult>>()
  #closed = false
  /** What `deliver()`'s in-memory schedule (./schedule.ts) is given of this destination. */
  readonly #schedule: ScheduleContext

  /** Validates every option; throws `ConfigError` naming the first problem. */
  constructor(options: WebhookDestinationOptions) {
    this.#options = resolveDestinationOptions(options)
    requestsOf.set(this, this.#requests)
    this.#schedule = {
      options: this.#options,
      events: this.#events,
      closing: this.#closing.signal,
      requests: this.#requests.signal,
      closed: () => this.#closed,
      targetsFor: (body) => this.targetsFor(body),
    }
    const log = createLogger('analytics:webhooks', debugEnables(readDebugSetting(), 'analytics:webhooks'))
    if (log.enabled) {
      const events = this.#events
      events.on('attempt', ({ attempt, urls }) => log(`attempt ${attempt}: POST to ${urls.map(maskUrl).join(', ')}`))
      events.on('delivered', ({ attempt, url, status }) => log(`delivered to ${maskUrl(url)} (${status}) after ${count(attempt, 'attempt')}`))
      events.on('late', ({ attempt, url, status, error }) => log(`attempt ${attempt}, after the delivery: ${error ? error.message : `${maskUrl(url)} answered ${status}`}`))
      if (!(FOR_COLLECTOR in options)) {
        events.on('retry', ({ attempt, delayMs, error }) => log(`attempt ${attempt} failed (${error.message}); retrying in ${delayMs} ms`))
        events.on('failed', ({ attempts, error }) => log(`failed after ${count(attempts, 'attempt')}: ${error.message}`))
      }
    }
  }

  /** The configured URLs, in order. */
  get urls(): string[] {
    return this.#options.targets.map((target) => target.url)
  }

  /** Deliveries that have not resolved yet (in flight or waiting to retry). */
  get pendingCount(): number {
    return this.#pending.size
  }

  /**
   * Adds a listener for `attempt`, `retry`, `delivered`, `failed` or `late` (see
   * {@link WebhookDestinationEvents}). A listener that throws is logged with `console.error` and
   * delivery goes on. Returns the destination, for chaining.
   *
   * @throws `ConfigError` for another event name or a listener that is not a function.
   */
  on<K extends keyof WebhookDestinationEvents>(event: K, listener: (info: WebhookDestinationEvents[K]) => void): this {
    this.#events.on(event, listener)
    return this
  }

  /**
   * Removes a listener added with {@link WebhookDestination.on}. Returns the destination.
   *
   * @throws `ConfigError` for an unknown event name or a listener that is not a function.
   */
  off<K extends keyof WebhookDestinationEvents>(event: K, listener: (info: WebhookDestinationEvents[K]) => void): this {
    this.#events.off(event, listener)
    return this
  }

  /**
   * Serialises `payload` once, signs that string, and POSTs it until delivered or failed for
   * good. Resolves with the outcome; never rejects (a payload that cannot be serialised, or a
   * call after `close()`, resolves with `delivered: false` and the error). Awaited, it holds the
   * process until it resolves, retry waits included (`./held.ts`); unawaited, it never does.
   */
  deliver(payload: object): Promise<DeliveryResult> {
    return heldWhileAwaited(this.#track(deliverOnSchedule(this.#schedule, payload, () => jsonOf(payload))))
  }

  /**
   * Like `deliver`, for a payload already serialised: `body` is POSTed and signed exactly as
   * given (so numbers keep the digits they were written with). `payload` only labels events.
   * A `body` that is not a string resolves with `delivered: false` and a `ValidationError`
   * naming `body`; nothing is sent. `urls`: the indexes of the URLs to deliver to (default: all;
   * the collector's replay to one URL).
   */
  deliverSerialized(body: string, payload: object = { body }, urls?: readonly number[]): Promise<DeliveryResult> {
    return heldWhileAwaited(this.#track(deliverOnSchedule(this.#schedule, payload, () => givenBody(body), urls)))
  }

  /**
   * Each URL with the headers an attempt with this body sends: its static headers, `X-Signature`
   * over `body` when a shared secret is set, and with `standardSecrets` the Standard Webhooks
   * `webhook-id` (the same for the same body) and, made at each attempt, its timestamp and
   * signature. Compute once per body.
   */
  targetsFor(body: string): AttemptTarget[] {
    const { targets, sharedSecret, standardKeys } = this.#options
    const signature = sharedSecret === undefined ? undefined : signSync(body, sharedSecret)
    const gated = gatesOf.get(this)
    if (standardKeys === undefined) {
      if (gated) return targets.map((t, i) => ({ url: t.url, headers: signature ? { ...t.headers, [SIGNATURE_HEADER]: signature } : t.headers, ...gated[i] }))
      return targets.map((t) => ({ url: t.url, headers: signature ? { ...t.headers, [SIGNATURE_HEADER]: signature } : t.headers }))
    }
    const id = webhookIdOf(body)
    const perAttempt = (nowMs: number) => standardHeaders(standardKeys, id, nowMs, body)
    return targets.map((t, i) => ({ url: t.url, headers: signature ? { ...t.headers, [SIGNATURE_HEADER]: signature } : t.headers, perAttempt, ...gated?.[i] }))
  }

  /**
   * One attempt and no schedule: POSTs `body` to the URLs `urls` (indexes, default all) and
   * resolves with the outcome, including the URLs worth another attempt and any Retry-After.
   * For a caller that owns the schedule (a durable queue). Never rejects: bad `urls` (none, or not
   * a URL's index) give a final `ValidationError`; after `close()` nothing is sent, and every URL
   * named stays in `retry` (a `ClientClosedError`), so a durable queue keeps the message.
   */
  attempt(
    body: string,
    options: {
      attempt?: number
      urls?: readonly number[]
      /** Each URL's outcome so far (from the previous attempt's `results`). */
      previous?: readonly UrlResult[]
      /** From `targetsFor(body)`, to sign once for many attempts. */
      targets?: readonly AttemptTarget[]
      /** Aborts the attempt's requests (an `AbortSignal` will do): then it resolves with `AbortedError`s. */
      signal?: StopSignal
      /** The outcome of each URL still answering when another URL accepted the message, once it comes. */
      onLate?: (index: number, result: UrlResult) => void
    } = {},
  ): Promise<AttemptOutcome> {
    const { fetch, timeout, now } = this.#options
    return attemptOnce({
      targets: options.targets ?? this.targetsFor(body),
      body,
      attempt: options.attempt ?? 1,
      ...(options.urls && { urls: options.urls }),
      ...(options.previous && { previous: options.previous }),
      ...(options.signal && { signal: options.signal }),
      ...(options.onLate && { onLate: options.onLate }),
      fetch,
      timeout,
      now,
      ...(this.#closed && { refused: new ClientClosedError('attempt') }),
    })
  }

  /**
   * The retry policy for a caller that owns the schedule: after attempt number `attempts` failed
   * with `outcome`, the delay before the next one (jittered exponential backoff, at least any
   * Retry-After), or `undefined` when there is none: every URL failed for good, or the next
   * attempt would start past the retry window measured from `firstAttemptAt` (ms since epoch).
   */
  nextRetryDelay(outcome: AttemptOutcome, attempts: number, firstAttemptAt: number): number | undefined {
    const { backoff, retryWindow, now, random } = this.#options
    if (outcome.deliveredBy >= 0 || outcome.retry.length === 0 || retryWindow === 0) return undefined
    const delay = retryDelay(attempts, backoff, random(), outcome.retryAfterMs)
    return now() + delay - firstAttemptAt > retryWindow ? undefined : delay
  }

  /**
   * For a caller that owns the schedule, when a retry `nextRetryDelay` gave is about to start: why
   * it may not (it would start past the retry window measured from `firstAttemptAt`, having come
   * due while nothing could run it), or `undefined` when it may.
   */
  retryTooLate(firstAttemptAt: number): string | undefined {
    const { retryWindow, now } = this.#options
    const elapsed = now() - firstAttemptAt
    return elapsed > retryWindow ? lateRetry(retryWindow, elapsed) : undefined
  }

  /** Why a delivery `nextRetryDelay` ended failed, worded as `deliver()`'s (naming the window if it ended it). */
  failure(outcome: AttemptOutcome, firstAttemptAt: number): AnalyticsError {
    const { retryWindow, now } = this.#options
    return finalError({ error: outcome.error, active: outcome.retry, stoppedBy: outcome.error, retryWindow, elapsed: now() - firstAttemptAt })
  }

  /** Held in `#pending` until it settles, either way; its rejection, if any, is the caller's only. */
  #track(promise: Promise<DeliveryResult>): Promise<DeliveryResult> {
    this.#pending.add(promise)
    const settled = () => void this.#pending.delete(promise)
    void promise.then(settled, settled)
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
    await Promise.allSettled([...this.#pending])
  }
}

