/**
 * Why a request failed, in words a user can act on. Every transport (fetch, Node `http`) turns its
 * failures into errors through these functions: the system error's name (`ECONNREFUSED`,
 * `ENOTFOUND`, `ETIMEDOUT`, a certificate code) goes into `message`, the original chain stays in
 * `cause`; an HTTP refusal carries its status, the server's own reason and the Retry-After used.
 */
import { HttpError, NetworkError, TlsError, type AnalyticsError } from '../errors.js'

/** TLS verification failures (Node's codes, as found on the fetch error's `cause`). */
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

const isTlsCode = (code: string) => TLS_CODES.has(code) || code.startsWith('ERR_TLS_')

/** Other runtimes' names for the same system errors (undici, Bun), and what Deno writes. */
const ALIASES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  ConnectionRefused: 'ECONNREFUSED',
  ConnectionReset: 'ECONNRESET',
  ConnectionClosed: 'ECONNRESET',
  Timeout: 'ETIMEDOUT',
}
const MESSAGE_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/connection refused/i, 'ECONNREFUSED'],
  [/connection reset/i, 'ECONNRESET'],
  [/failed to lookup address|dns error|name or service not known|nodename nor servname/i, 'ENOTFOUND'],
  [/timed out/i, 'ETIMEDOUT'],
  [/certificate/i, 'CERTIFICATE'],
]

/** Every error in the chain: `cause` links and the members of an `AggregateError`. */
function chainOf(error: unknown): unknown[] {
  const chain: unknown[] = []
  const pending: unknown[] = [error]
  while (pending.length > 0 && chain.length < 12) {
    const current = pending.shift()
    if (!current || typeof current !== 'object' || chain.includes(current)) continue
    chain.push(current)
    const { cause, errors } = current as { cause?: unknown; errors?: unknown }
    if (cause !== undefined) pending.push(cause)
    if (Array.isArray(errors)) pending.push(...errors)
  }
  return chain
}

/** The system error a failed request comes down to (`ECONNREFUSED`, …), when the chain names one. */
export function systemErrorCode(error: unknown): string | undefined {
  const chain = chainOf(error)
  for (const link of chain) {
    const code = (link as { code?: unknown }).code
    if (typeof code === 'string' && code !== '') return ALIASES[code] ?? code
  }
  for (const link of chain) {
    const message = (link as { message?: unknown }).message
    if (typeof message !== 'string') continue
    for (const [pattern, code] of MESSAGE_PATTERNS) if (pattern.test(message)) return code
  }
  return undefined
}

export function isTlsFailure(error: unknown): boolean {
  const code = systemErrorCode(error)
  return code !== undefined && (isTlsCode(code) || code === 'CERTIFICATE')
}

/** The innermost message of the chain: the most specific words the runtime gave. */
function innermostMessage(error: unknown): string {
  const messages = chainOf(error)
    .map((link) => (link as { message?: unknown }).message)
    .filter((m): m is string => typeof m === 'string' && m !== '')
  return messages[messages.length - 1] ?? String(error)
}

/**
 * The error for a request that got no answer: `TlsError` for a refused certificate (never
 * retried), else `NetworkError`; the message names the system error, `cause` keeps the chain.
 */
export function transportFailure(url: string, error: unknown): AnalyticsError {
  const code = systemErrorCode(error)
  const detail = innermostMessage(error)
  if (code !== undefined && (isTlsCode(code) || code === 'CERTIFICATE')) {
    return new TlsError(`TLS certificate refused for ${url} (${code === 'CERTIFICATE' ? detail : code}).`, { cause: error })
  }
  const named = code === undefined || detail.includes(code) ? detail : `${code}: ${detail}`
  return new NetworkError(`Request to ${url} failed: ${named}`, { cause: error })
}

/** Longest server reason we quote. */
export const MAX_REASON_CHARS = 200
/** Bytes of a refusal's body we read at most to find its reason. */
const MAX_REASON_BYTES = 16_384

/**
 * The server's reason for a refusal: the `message` of a JSON body (also `error.message`, as the
 * collector sends it, or a string `error`), else a short plain-text body; at most 200 characters.
 * Consumes the body; never throws.
 */
export async function readReason(response: Response): Promise<string | undefined> {
  let text: string
  try {
    text = await readCapped(response)
  } catch {
    return undefined
  }
  const type = response.headers.get('content-type') ?? ''
  let reason: unknown
  if (type.includes('json') || /^\s*\{/.test(text)) {
    try {
      const body = JSON.parse(text) as { message?: unknown; error?: unknown }
      const nested = body.error as { message?: unknown } | undefined
      reason = typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : nested?.message
    } catch {
      reason = undefined
    }
  } else if (type.startsWith('text/plain')) {
    reason = text
  }
  if (typeof reason !== 'string') return undefined
  const oneLine = reason.replace(/\s+/g, ' ').trim()
  if (oneLine === '') return undefined
  return oneLine.length > MAX_REASON_CHARS ? `${oneLine.slice(0, MAX_REASON_CHARS - 1)}…` : oneLine
}

async function readCapped(response: Response): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  while (size < MAX_REASON_BYTES) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
  }
  void reader.cancel().catch(() => {})
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return new TextDecoder().decode(bytes.subarray(0, MAX_REASON_BYTES))
}

/**
 * The error for a refusal: `.status`, the server's reason (from its body) and `.retryAfterMs`
 * (the Retry-After that will be honoured), all in the message too. Consumes the body.
 */
export async function httpFailure(url: string, response: Response, retryAfterMs: number | undefined): Promise<HttpError> {
  const { status } = response
  if (status === 0 || (status >= 300 && status < 400)) {
    void response.body?.cancel().catch(() => {})
    return new HttpError(status, `${url} answered with a redirect (${status}); redirects are not followed.`)
  }
  const reason = await readReason(response)
  const waited = retryAfterMs === undefined ? '' : ` (Retry-After: ${retryAfterMs} ms)`
  const text = reason ?? response.statusText
  const message = `${url} answered ${status}${waited}${text ? `: ${text}` : ''}${/[.!?…]$/.test(text) ? '' : '.'}`
  return new HttpError(status, message, { retryAfterMs, reason })
}
