/**
 * One HTTP attempt with a timeout, turning every way it can fail into a typed error:
 * `TimeoutError`, `AbortedError` (the caller's signal), or what `transportFailure` makes of the
 * rest (`TlsError` for a refused certificate, else `NetworkError` naming the system error).
 */
import { AbortedError, TimeoutError } from '../errors.js'
import { transportFailure } from './failure.js'
import { setBackgroundTimeout, type FetchLike } from '../platform/runtime.js'

export interface AttemptRequest {
  url: string
  method?: string
  headers: Record<string, string>
  body: string | Uint8Array
  timeoutMs: number
  signal?: AbortSignal
  /** Browser unload: let the request outlive the page. */
  keepalive?: boolean
}

export { isTlsFailure } from './failure.js'

export async function attemptRequest(fetch: FetchLike, request: AttemptRequest): Promise<Response> {
  const controller = new AbortController()
  let timedOut = false
  const timer = setBackgroundTimeout(() => {
    timedOut = true
    controller.abort()
  }, request.timeoutMs)
  const onOuterAbort = () => controller.abort()
  request.signal?.addEventListener('abort', onOuterAbort, { once: true })
  try {
    if (request.signal?.aborted) throw new AbortedError('Aborted before the request was sent.')
    const response = await fetch(request.url, {
      method: request.method ?? 'POST',
      headers: request.headers,
      body: request.body as BodyInit,
      signal: controller.signal,
      redirect: 'manual',
      ...(request.keepalive ? { keepalive: true } : {}),
    })
    return response
  } catch (error) {
    if (timedOut) throw new TimeoutError(request.timeoutMs, { cause: error, url: request.url })
    if (request.signal?.aborted) throw new AbortedError('Request aborted.', { cause: error })
    if (error instanceof AbortedError) throw error
    throw transportFailure(request.url, error)
  } finally {
    clearTimeout(timer)
    request.signal?.removeEventListener('abort', onOuterAbort)
  }
}

/** Reads and discards a response body so the connection can be reused; never throws. */
export async function discardBody(response: Response): Promise<void> {
  try {
    await response.arrayBuffer()
  } catch {
    // Nothing to do: the answer's status is all we need.
  }
}
