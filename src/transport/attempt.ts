/**
 * Attempts: one HTTP attempt with a timeout, turning every way it can fail into a typed error
 * (`TimeoutError`, `AbortedError` for the caller's signal, or what `transportFailure` makes of the
 * rest: `TlsError` for a refused certificate, else `NetworkError` naming the system error); and
 * `retry`, the loop that runs an attempt function until it succeeds, fails with a final error,
 * runs out of retries or of its retry window, or is aborted. The two stay apart as functions: the
 * collector's durable mode lets BullMQ schedule its attempts, with no loop of ours inside.
 */
import { AbortedError, isAnalyticsError, TimeoutError } from '../errors.js'
import { kindOf } from '../message/validate.js'
import { readCapped, setBackgroundTimeout, transportFailure } from '#platform'
import type { HttpAnswer, TimedTransportInit, TransportInit } from './types.js'
import { isRetryableError, retryDelay, type BackoffOptions } from './retry-policy.js'
import { sleep } from './sleep.js'
import type { StopSignal } from './stop.js'

export interface AttemptRequest {
  url: string
  headers: Record<string, string>
  body: string | Uint8Array<ArrayBuffer>
  timeoutMs: number
  signal?: StopSignal
  /** Browser unload: let the request outlive the page. */
  keepalive?: boolean
}

export { isTlsFailure } from './failure.js'

/**
 * `send` is a fetch or another transport (`nodeRequest`): whichever it is, its failures are named
 * here, in one place. A fetch gets a signal of its own, aborted by the timer or the caller's signal.
 * The time limit and the caller's signal end the attempt even when the fetch ignores its signal,
 * and they cover a refusal's body too, which is read here: a body that stalls after its headers
 * must not hold the attempt (and `flush()`, `close()`) for ever. A refusal whose body did not
 * arrive in time keeps its status, without a reason.
 */
export async function attemptRequest<R extends HttpAnswer>(
  send: ((url: string, init: TransportInit) => Promise<R>) & { readonly takesTimeout?: boolean },
  request: AttemptRequest,
): Promise<R> {
  // Only the Node transport takes a timeout itself.
  if (send.takesTimeout) return attemptTimed(send as unknown as (url: string, init: TimedTransportInit) => Promise<R>, request)
  const controller = new AbortController()
  let timedOut = false
  // Settles (rejected) once the attempt is aborted, whether or not the fetch heeds its signal.
  const ended = new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(controller.signal.reason)))
  const timer = setBackgroundTimeout(() => {
    timedOut = true
    controller.abort()
  }, request.timeoutMs)
  const onOuterAbort = () => controller.abort()
  request.signal?.addEventListener('abort', onOuterAbort) // Removed in `finally`.
  try {
    if (request.signal?.aborted) throw new AbortedError('Aborted before the request was sent.')
    const response = await Promise.race([ended, send(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: 'manual',
      ...(request.keepalive && { keepalive: true }),
    })])
    // A `fetch` option that resolves with something else (`undefined`, a parsed body) is named
    // for what it did, by the kind of value only: what it holds is not ours to show.
    if (typeof response?.status !== 'number' || !response.headers?.get) throw new TypeError(`Expected \`fetch\` to resolve with a Response, got ${kindOf(response)}.`)
    const { status, headers } = response
    if (status > 199 && status < 300) return response
    const text = await Promise.race([ended, readCapped(response)]).catch(() => '')
    // Read whole: no `body` (so nothing for `discardBody`), its text kept.
    return { status, headers, text: async () => text } as HttpAnswer as R
  } catch (error) {
    throw attemptFailure(error, request, timedOut)
  } finally {
    clearTimeout(timer)
    request.signal?.removeEventListener('abort', onOuterAbort)
  }
}

/**
 * The same with a transport that `takesTimeout` (`nodeRequest`): it is handed the time limit and
 * the caller's signal as they are, so no `AbortController` or timer is made here for it.
 */
async function attemptTimed<R extends HttpAnswer>(send: (url: string, init: TimedTransportInit) => Promise<R>, request: AttemptRequest): Promise<R> {
  if (request.signal?.aborted) throw new AbortedError('Aborted before the request was sent.')
  try {
    return await send(request.url, {
      method: 'POST', headers: request.headers, body: request.body, redirect: 'manual', timeoutMs: request.timeoutMs, signal: request.signal,
    })
  } catch (error) {
    throw attemptFailure(error, request, (error as { timedOut?: unknown } | undefined)?.timedOut === true)
  }
}

/** What a failed attempt was, named for both paths: out of time, stopped, or the transport's failure. */
function attemptFailure(error: unknown, request: AttemptRequest, timedOut: boolean): Error {
  if (timedOut) return new TimeoutError(request.timeoutMs, { cause: error, url: request.url })
  if (request.signal?.aborted) return new AbortedError('Request aborted.', { cause: error })
  if (error instanceof AbortedError) return error
  return transportFailure(request.url, error)
}

/*
 * The retry loop. Its delays are full jitter, never shorter than Retry-After, slept on a
 * background timer so a pending retry never keeps a process alive. (The loop was p-retry's, with
 * every option of it turned off but the loop itself: a large share of the browser budget for a
 * few lines.)
 */

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
