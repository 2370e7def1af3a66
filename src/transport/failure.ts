/**
 * Why a request failed, in words a user can act on. Every transport (fetch, Node `http`) turns its
 * failures into errors through these functions: the system error's name (`ECONNREFUSED`,
 * `ENOTFOUND`, `ETIMEDOUT`, a certificate code) goes into `message`, the original chain stays in
 * `cause`; an HTTP refusal carries its status, the server's own reason and the Retry-After used.
 */
import { HttpError, messageOf, NetworkError, TlsError, type AnalyticsError } from '../errors.js'
import type { HttpAnswer } from './types.js'
import { readUpTo } from './read-stream.js'
import { classifyStatus } from './retry-policy.js'

/**
 * TLS verification failures: Node's codes (`DEPTH_ZERO_SELF_SIGNED_CERT`, `CERT_HAS_EXPIRED`,
 * `UNABLE_TO_VERIFY_LEAF_SIGNATURE`, `ERR_TLS_CERT_ALTNAME_INVALID`, …).
 */
const isTlsCode = (code: string) => /CERT|^ERR_TLS_|SELF_SIGNED|^UNABLE_TO_(?:VERIFY|GET_ISSUER)/.test(code)

/** Deno names no code for a refused certificate, only words: "… invalid peer certificate: UnknownIssuer". */
const DENO_TLS_WORDS = /invalid peer certificate/i

/**
 * Other names for the same system errors: undici's connect timeout, Bun's codes. (Deno gives no
 * code, only words, e.g. "tcp connect error: Connection refused (os error 111)", which the message
 * quotes as they are.)
 */
const ALIASES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  ConnectionRefused: 'ECONNREFUSED',
}

/** Every error in the chain: `cause` links and the members of an `AggregateError`. */
function chainOf(error: unknown): unknown[] {
  const chain: unknown[] = []
  const pending: unknown[] = [error]
  while (pending.length > 0) {
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
  for (const link of chainOf(error)) {
    const code = (link as { code?: unknown }).code
    if (typeof code === 'string' && code !== '') return ALIASES[code] ?? code
  }
  return undefined
}

/** What names a refused certificate: its code (Node, Bun), else Deno's words; undefined if none. */
function tlsFailure(error: unknown): string | undefined {
  const code = systemErrorCode(error)
  if (code !== undefined) return isTlsCode(code) ? code : undefined
  const words = innermostMessage(error)
  return DENO_TLS_WORDS.test(words) ? words : undefined
}

export function isTlsFailure(error: unknown): boolean {
  return tlsFailure(error) !== undefined
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
  // (Browsers give no system error codes, TLS details nor causes: a failed fetch is an opaque
  // `TypeError: Failed to fetch`. The browser build quotes the message: ../platform/browser.ts.)
  const tls = tlsFailure(error)
  if (tls !== undefined) return new TlsError(`TLS certificate refused for ${url} (${tls}).`, { cause: error })
  const code = systemErrorCode(error)
  const detail = innermostMessage(error)
  const named = code === undefined || detail.includes(code) ? detail : `${code}: ${detail}`
  return new NetworkError(`Request to ${url} failed: ${named}`, { cause: error })
}

/** Longest server reason we quote. */
export const MAX_REASON_CHARS = 200
/** Bytes of a refusal's body we read at most to find its reason. */
export const MAX_REASON_BYTES = 16_384

/**
 * The server's reason for a refusal: the `message` of its JSON body (or `error.message`, as the
 * collector sends it, or a string `error`), on one line, at most 200 characters. Never throws.
 */
export async function readReason(response: HttpAnswer): Promise<string | undefined> {
  try {
    // `attemptRequest` has read it (its first 16 KB: the platform's `readCapped`).
    const text = (await response.text()).slice(0, MAX_REASON_BYTES)
    if (!response.headers.get('content-type')?.includes('json')) return undefined
    const body = JSON.parse(text) as { message?: unknown; error?: { message?: unknown } }
    // `{ "message" }`, `{ "error": { "message" } }` (the collector's), `{ "error": "…" }` (a webhook
    // handler's, this package's too).
    const reason = body.message ?? body.error?.message ?? body.error
    const oneLine = typeof reason === 'string' ? reason.replace(/\s+/g, ' ').trim() : ''
    if (oneLine) return oneLine.length > MAX_REASON_CHARS ? `${oneLine.slice(0, MAX_REASON_CHARS - 1)}…` : oneLine
  } catch {
    // No reason to quote: the status alone says what happened.
  }
  return undefined
}

/**
 * The body's first 16 KB as text (a refusal's reason is short): a stream is read that far and then
 * cancelled, so a huge refusal is never held whole. An answer without a stream (`nodeRequest`'s,
 * which keeps at most 16 KiB of a body itself) is read with `text()`. `attemptRequest` reads it
 * within the attempt's time limit (`nodeRequest` bounds it with its own timer).
 */
export async function readCapped(response: HttpAnswer): Promise<string> {
  if (!response.body) return (await response.text()).slice(0, MAX_REASON_BYTES)
  const { bytes } = await readUpTo(response.body, MAX_REASON_BYTES)
  return new TextDecoder().decode(bytes)
}

/**
 * The error for a refusal: `.status`, the server's reason (from its body) and `.retryAfterMs`
 * (the Retry-After that will be honoured: none on a final status), all in the message too.
 * Consumes the body.
 */
export async function httpFailure(url: string, response: HttpAnswer, retryAfterMs: number | undefined): Promise<HttpError> {
  const { status } = response
  // `attemptRequest` has read the body of every answer that is not a success.
  if (status === 0 || (status >= 300 && status < 400)) {
    return new HttpError(status, `${url} answered with a redirect (${status}); redirects are not followed.`)
  }
  const reason = await readReason(response)
  // A Retry-After matters only where there is a retry: on a final answer (a 400) it is ignored,
  // so quoting it would say the opposite of what happens.
  if (classifyStatus(status) !== 'retry') retryAfterMs = undefined
  const waited = retryAfterMs === undefined ? '' : ` (Retry-After: ${retryAfterMs} ms)`
  return new HttpError(status, `${url} answered ${status}${waited}${reason ? `: ${reason}` : '.'}`, { retryAfterMs, reason })
}
