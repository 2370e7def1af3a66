/**
 * One delivery attempt, and nothing else: POST an already-serialised, already-signed body to the
 * URLs still worth trying, in parallel, and say what happened: delivered (which URL), or which
 * URLs are worth another attempt and the Retry-After they asked for. When to try again is not
 * decided here: `WebhookDestination.deliver` runs its own in-memory schedule on top of this, and
 * a durable queue (the collector's BullMQ mode) owns the schedule with its delayed jobs.
 *
 * Per URL: 2xx succeeds; timeouts, network errors, 408, 429 and 5xx are retryable; anything else
 * (other 4xx, 3xx since redirects are not followed, a refused TLS certificate) is final for that
 * URL. The attempt settles as soon as one URL answers 2xx (the others complete in the background,
 * are reported `pending`, and their outcome goes to `onLate` when it comes), or once all have
 * answered.
 */
import { isAnalyticsError, TimeoutError, ValidationError, type AnalyticsError } from '../errors.js'
import type { Transport } from '../platform/transport.js'
import { attemptRequest } from '../transport/attempt.js'
import { httpFailure, transportFailure } from '../transport/failure.js'
import { parseRetryAfter } from '../transport/retry-after.js'
import { classifyStatus, isRetryableError } from '../transport/retry-policy.js'
import { maskUrl } from '../secrets.js'
import type { StopSignal } from '../transport/stop.js'
import { answerText, readAnswer } from './answer.js'

/** One URL's outcome: a status, an error, or (when another URL already succeeded) `pending`. */
export interface UrlResult {
  /** The URL, as configured. */
  url: string
  /** The attempt this outcome comes from, from 1 (0: never attempted). */
  attempt: number
  /** The HTTP status, when the URL answered. */
  status?: number
  /**
   * The first 1,024 bytes of the URL's answer body, as text (a success's is read before the
   * attempt settles, within `timeout`; the rest is dropped). Absent when it answered with none.
   */
  answer?: string
  /** How long the URL took, in ms: from the request's start to its answer (and its first KB), or to its failure. */
  durationMs?: number
  /** Why this URL did not accept the message: `HttpError`, `TimeoutError`, `NetworkError`, `TlsError`… */
  error?: AnalyticsError
  /**
   * Still answering when another URL accepted the message; it completes in the background and its
   * outcome comes later (`AttemptRequest.onLate`, the destination's `late` event).
   */
  pending?: true
}

/** Where one attempt goes: each URL with its full headers (static headers and signature). */
export interface AttemptTarget {
  /** The URL, as configured. */
  url: string
  /** Every header the request carries: static ones, `User-Agent`, `Content-Type`, and any `X-Signature`. */
  headers: Readonly<Record<string, string>>
  /**
   * Headers made again for each attempt, at its start (`now()`), added to `headers`: Standard
   * Webhooks' timestamp and signature, which a receiver refuses once they are old.
   */
  perAttempt?: (nowMs: number) => Readonly<Record<string, string>>
  /**
   * Not public API (the collector's endpoint health): asked at each attempt; an error means the
   * URL is not sent to, and that error is its (final) outcome.
   */
  refused?: () => AnalyticsError | undefined
  /** Not public API (the collector's endpoint health): told each outcome of a request made to this URL. */
  observe?: (result: UrlResult) => void
}

export interface AttemptRequest {
  targets: readonly AttemptTarget[]
  /** The exact bytes to POST (the signature, if any, is over this string). */
  body: string
  /** This attempt's number, from 1. */
  attempt: number
  /** Indexes into `targets` of the URLs this attempt goes to (default: all). */
  urls?: readonly number[]
  /** Each URL's outcome so far (default: none attempted); URLs not tried keep theirs. */
  previous?: readonly UrlResult[]
  /** The user's fetch, or the transport it names (`transportOf`). */
  fetch: Transport
  timeout: number
  now: () => number
  /**
   * Send nothing: each URL of this attempt fails with this error and stays worth another attempt
   * (`attempt()` after `close()`: a durable queue keeps the message and retries it later).
   */
  refused?: AnalyticsError
  /** Aborts the requests still open: an attempt given up on does not keep its connections. */
  signal?: StopSignal
  /**
   * Called with the outcome of each URL that was still answering when the attempt settled
   * (another URL accepted the message: it was reported `pending`), once that URL answers or
   * fails. It changes nothing about the attempt. A throw from it is ignored.
   */
  onLate?: (index: number, result: UrlResult) => void
}

/**
 * What {@link WebhookDestination.attempt} resolves with: delivered (by which URL), or which URLs
 * are worth another attempt and the error that decides what happens next. For a caller that owns
 * the retry schedule, with {@link WebhookDestination.nextRetryDelay}.
 */
export interface AttemptOutcome {
  /** Index of the URL that answered 2xx, or -1. */
  deliveredBy: number
  /** Each URL's latest outcome, in the order of `targets`. */
  results: UrlResult[]
  /**
   * When not delivered: the URLs worth another attempt (their failure was retryable, or nothing
   * was sent: `close()` had been called). Empty when every URL failed for good: then the delivery
   * has failed.
   */
  retry: number[]
  /**
   * When not delivered: the error that decides what happens next: the retryable one asking the
   * longest Retry-After if any (so every URL's wish is honoured), else the first final one; a
   * `ClientClosedError` when nothing was sent because of `close()`.
   */
  error?: AnalyticsError
  /** The deciding error's Retry-After in ms, when the server sent one (uncapped). */
  retryAfterMs?: number
}

export const retryAfterOf = (error: AnalyticsError | undefined): number =>
  (error as { retryAfterMs?: number } | undefined)?.retryAfterMs ?? -1

/**
 * Tries once; resolves with the outcome, never rejects. `urls` that name no URL, or an index that
 * is not one of `targets`, resolve at once with a final `ValidationError` naming `urls` and nothing
 * sent (a bad index would otherwise throw, and an empty list never settle); with `refused`, at once
 * with that error, nothing sent, and every URL named left to retry.
 */
export function attemptOnce(request: AttemptRequest): Promise<AttemptOutcome> {
  const { targets, body, attempt: n } = request
  const active = request.urls ?? targets.map((_, i) => i)
  const results: UrlResult[] = request.previous ? request.previous.map((r) => ({ ...r })) : targets.map(({ url }) => ({ url, attempt: 0 }))
  const invalid = invalidUrls(active, targets.length)
  if (invalid) return Promise.resolve({ deliveredBy: -1, results, retry: [], error: invalid })
  const { refused } = request
  if (refused) {
    for (const i of active) results[i] = { url: targets[i].url, attempt: n, error: refused }
    return Promise.resolve({ deliveredBy: -1, results, retry: [...active], error: refused })
  }
  for (const i of active) results[i] = { url: targets[i].url, attempt: n, pending: true }
  const headersOf = attemptHeaders(request.now)
  return new Promise<AttemptOutcome>((resolve) => {
    let remaining = active.length
    let settled = false
    for (const i of active) {
      const target = targets[i]
      const blocked = target.refused?.()
      void (blocked ? Promise.resolve({ error: blocked }) : send(request, target, headersOf(target), body)).then((outcome) => {
        const result: UrlResult = { url: target.url, attempt: n, ...outcome }
        if (!blocked) target.observe?.(result)
        if (settled) return reportLate(request, i, result)
        results[i] = result
        remaining--
        if (outcome.error === undefined) {
          settled = true
          resolve({ deliveredBy: i, results: results.slice(), retry: [] })
        } else if (remaining === 0) {
          settled = true
          resolve(concludeFailedAttempt(results.slice(), active))
        }
      })
    }
  })
}

/** Each target's headers for this attempt: its `perAttempt` ones made once (the URLs share them). */
function attemptHeaders(now: () => number): (target: AttemptTarget) => Readonly<Record<string, string>> {
  let made: AttemptTarget['perAttempt']
  let extra: Readonly<Record<string, string>> = {}
  return (target) => {
    if (target.perAttempt === undefined) return target.headers
    if (target.perAttempt !== made) {
      made = target.perAttempt
      extra = made(now())
    }
    return { ...target.headers, ...extra }
  }
}

/** Only an attempt delivered by another URL settles with URLs still answering. */
function reportLate(request: AttemptRequest, index: number, result: UrlResult): void {
  try {
    request.onLate?.(index, result)
  } catch {
    // The caller's to handle: an attempt that has settled has no one to tell.
  }
}

function invalidUrls(active: readonly number[], count: number): ValidationError | undefined {
  if (active.length === 0) return new ValidationError('urls', 'Expected `urls` to name at least one URL to attempt, got `[]`.')
  const bad = active.find((i) => !Number.isInteger(i) || i < 0 || i >= count)
  if (bad === undefined) return undefined
  return new ValidationError('urls', `Expected \`urls\` to hold indexes of the configured URLs (0 to ${count - 1}), got \`${String(bad)}\`.`)
}

function concludeFailedAttempt(results: UrlResult[], active: readonly number[]): AttemptOutcome {
  const retry = active.filter((i) => isRetryableError(results[i].error))
  const error =
    retry.length > 0
      ? retry.map((i) => results[i].error!).reduce((a, b) => (retryAfterOf(b) > retryAfterOf(a) ? b : a))
      : results[active[0]].error
  const retryAfterMs = retryAfterOf(error)
  return { deliveredBy: -1, results, retry, error, ...(retryAfterMs >= 0 && { retryAfterMs }) }
}

async function send(request: AttemptRequest, target: AttemptTarget, headers: Readonly<Record<string, string>>, body: string): Promise<Omit<UrlResult, 'url' | 'attempt'>> {
  const { fetch, timeout, now, signal } = request
  const { url } = target
  const started = now()
  const answered = (status: number, answer: string) => ({ status, ...(answer !== '' && { answer }), durationMs: now() - started })
  try {
    const response = await attemptRequest(fetch, { url, headers: headers as Record<string, string>, body, timeoutMs: timeout, ...(signal && { signal }) })
    const { status } = response
    if (classifyStatus(status) === 'success') return answered(status, await readAnswer(response, Math.max(0, timeout - (now() - started))))
    // Uncapped: a Retry-After that reaches past the retry window ends the retrying instead of
    // being cut short (the scheduler never sleeps past the window).
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), Number.MAX_SAFE_INTEGER, now())
    // `attemptRequest` has read a refusal's body (its first 16 KB): kept for `httpFailure` too.
    const answer = await answerText(response)
    return { ...answered(status, answer), error: await httpFailure(maskUrl(url), response, retryAfterMs) }
  } catch (error) {
    const durationMs = now() - started
    if (isAnalyticsError(error)) return { error: withMaskedUrl(error, url, timeout), durationMs }
    return { error: transportFailure(maskUrl(url), error), durationMs }
  }
}

/**
 * A webhook URL may carry a credential (`?token=…`): the errors `attemptRequest` makes name the URL
 * as fetched, so they are made again from the same cause with it masked. (The client's endpoint
 * carries none: its write key travels in a header.)
 */
function withMaskedUrl(error: AnalyticsError, url: string, timeout: number): AnalyticsError {
  const shown = maskUrl(url)
  if (shown === url) return error
  if (error.code === 'TIMEOUT') return new TimeoutError(timeout, { cause: error.cause, url: shown })
  if (error.code === 'NETWORK' || error.code === 'TLS') return transportFailure(shown, error.cause)
  return error
}
