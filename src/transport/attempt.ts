/**
 * One HTTP attempt with a timeout, turning every way it can fail into a typed error:
 * `TimeoutError`, `AbortedError` (the caller's signal), or what `transportFailure` makes of the
 * rest (`TlsError` for a refused certificate, else `NetworkError` naming the system error).
 */
import { AbortedError, TimeoutError } from '../errors.js'
import { kindOf } from '../message/validate.js'
import { readCapped, setBackgroundTimeout, transportFailure } from '#platform'
import type { HttpAnswer, TimedTransportInit, TransportInit } from './types.js'
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
