/**
 * One HTTP attempt with a timeout, turning every way it can fail into a typed error:
 * `TimeoutError`, `AbortedError` (the caller's signal), or what `transportFailure` makes of the
 * rest (`TlsError` for a refused certificate, else `NetworkError` naming the system error).
 */
import { AbortedError, TimeoutError } from '../errors.js'
import { transportFailure } from './failure.js'
import { setBackgroundTimeout } from '../platform/runtime.js'
import type { HttpAnswer, TimedTransportInit, TransportInit } from '../platform/transport.js'
import type { StopSignal } from './stop.js'

export interface AttemptRequest {
  url: string
  method?: string
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
 */
export async function attemptRequest<R extends HttpAnswer>(
  send: ((url: string, init: TransportInit) => Promise<R>) & { readonly takesTimeout?: boolean },
  request: AttemptRequest,
): Promise<R> {
  // Only the Node transport takes a timeout itself (the browser build has none).
  if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__) && send.takesTimeout) return attemptTimed(send as unknown as (url: string, init: TimedTransportInit) => Promise<R>, request)
  const controller = new AbortController()
  let timedOut = false
  const timer = setBackgroundTimeout(() => {
    timedOut = true
    controller.abort()
  }, request.timeoutMs)
  const onOuterAbort = () => controller.abort()
  request.signal?.addEventListener('abort', onOuterAbort) // Removed in `finally`.
  try {
    if (request.signal?.aborted) throw new AbortedError('Aborted before the request was sent.')
    const response = await send(request.url, {
      method: request.method ?? 'POST',
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: 'manual',
      ...(request.keepalive ? { keepalive: true } : {}),
    })
    return response
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
      method: request.method ?? 'POST', headers: request.headers, body: request.body, redirect: 'manual', timeoutMs: request.timeoutMs, signal: request.signal,
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

/**
 * Reads and discards a response body so the connection can be reused; never throws. An answer
 * without a `body` stream (`nodeRequest`'s) was read whole already: nothing to release, and no
 * copy of its bytes is made.
 */
export async function discardBody(response: HttpAnswer): Promise<void> {
  if (response.body === undefined) return
  try {
    await response.arrayBuffer()
  } catch {
    // Nothing to do: the answer's status is all we need.
  }
}
