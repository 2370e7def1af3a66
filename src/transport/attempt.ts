/**
 * One HTTP attempt with a timeout, turning every way it can fail into a typed error:
 * `TimeoutError`, `TlsError` (certificate refused: never retried), `AbortedError` (the caller's
 * signal), or `NetworkError` (anything else before an answer).
 */
import { AbortedError, NetworkError, TimeoutError, TlsError } from '../errors.js'
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

/** Node's TLS verification failures, as found on `error.cause.code` of a failed fetch. */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
])

function errorCodes(error: unknown): string[] {
  const codes: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && current && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
    current = (current as { cause?: unknown }).cause
  }
  return codes
}

export function isTlsFailure(error: unknown): boolean {
  return errorCodes(error).some((code) => TLS_CODES.has(code) || code.startsWith('ERR_TLS_'))
}

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
    if (timedOut) throw new TimeoutError(request.timeoutMs, { cause: error })
    if (request.signal?.aborted) throw new AbortedError('Request aborted.', { cause: error })
    if (isTlsFailure(error)) {
      const code = errorCodes(error).find((c) => TLS_CODES.has(c) || c.startsWith('ERR_TLS_'))
      throw new TlsError(`TLS certificate refused for ${request.url} (${code}).`, { cause: error })
    }
    if (error instanceof AbortedError) throw error
    const reason = error instanceof Error ? error.message : String(error)
    throw new NetworkError(`Request to ${request.url} failed: ${reason}`, { cause: error })
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
