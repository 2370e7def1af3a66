/**
 * Request signing (seed §5): `X-Signature` is the lowercase hex HMAC-SHA1 of the exact UTF-8
 * bytes of the body, keyed with the shared secret. The sender signs the very string it sends; a
 * receiver must verify the raw bytes it received, never a re-serialised parse of them.
 */
import { ConfigError, ValidationError } from '../errors.js'
import { describe, isDate } from '../message/validate.js'
import { nativeHmacSha1 } from '../platform/hmac.js'
import { maskSecret } from '../secrets.js'
import { hmac } from '@noble/hashes/hmac'
import { sha1 } from '@noble/hashes/legacy'

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'X-Signature'

/** What `verifySignature` accepts as the raw body: the text, or its bytes (Buffer included). */
export type RawBody = string | ArrayBuffer | ArrayBufferView

const encoder = new TextEncoder()
const HEX = Array.from({ length: 256 }, (_, i) => (i + 0x100).toString(16).slice(1))
const SIGNATURE_PATTERN = /^[0-9a-f]{40}$/i

// A reused buffer for UTF-8 encoding: signing is synchronous, so no two calls share it at once.
let scratch = new Uint8Array(4096)

function encodeUtf8(text: string): { bytes: Uint8Array; length: number } {
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes.
  if (text.length * 3 > scratch.length) scratch = new Uint8Array(Math.max(text.length * 3, scratch.length * 2))
  const { written } = encoder.encodeInto(text, scratch)
  return { bytes: scratch, length: written }
}

type KeyedHmac = ReturnType<typeof hmac.create>

// One keyed HMAC per secret, cloned for each message (the key's two pad blocks are hashed once).
// A destination or a receiver uses one or two secrets; the bound only stops a caller that signs
// with ever-new secrets from growing the cache without limit.
const MAX_CACHED_KEYS = 64
const keys = new Map<string, KeyedHmac>()

/** The pure-JS HMAC, for runtimes without a native one (`nativeHmacSha1`). */
export function portableHmacSha1(secret: string, bytes: Uint8Array): Uint8Array {
  let keyed = keys.get(secret)
  // Stryker disable next-line ConditionalExpression: keying every time gives the same digest, only slower.
  if (!keyed) {
    keyed = hmac.create(sha1, encoder.encode(secret))
    // Stryker disable next-line all: the bound caps the cache's memory; it changes no digest.
    if (keys.size >= MAX_CACHED_KEYS) keys.delete(keys.keys().next().value as string)
    keys.set(secret, keyed)
  }
  return keyed.clone().update(bytes).digest()
}

function toBytes(body: RawBody): Uint8Array | undefined {
  // Stryker disable next-line ConditionalExpression: without it, the view below is the same bytes.
  if (body instanceof Uint8Array) return body
  if (body instanceof ArrayBuffer) return new Uint8Array(body)
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength)
  return undefined
}

function toHex(digest: Uint8Array): string {
  let hex = ''
  for (let i = 0; i < digest.length; i++) hex += HEX[digest[i]]
  return hex
}

/** HMAC-SHA1 of a string's UTF-8 bytes or of bytes: the runtime's own where it has one. */
function hmacSha1(secret: string, body: string | Uint8Array): Uint8Array {
  // Stryker disable next-line ConditionalExpression: both give the same digest (the tests check it).
  if (nativeHmacSha1) return nativeHmacSha1(secret, body)
  // Stryker disable next-line ConditionalExpression,StringLiteral: noble hashes a string as its UTF-8 bytes too.
  if (typeof body !== 'string') return portableHmacSha1(secret, body)
  const { bytes, length } = encodeUtf8(body)
  return portableHmacSha1(secret, bytes.subarray(0, length))
}

/**
 * A bad secret (or static header value, often a credential) as an error may show it. `describe`
 * prints numbers, bigints and dates as they are, and a numeric secret is easy to get from a JSON or
 * YAML config: those show at most their last four characters, as string secrets do everywhere
 * (`maskSecret`). Other values are named by their type only, or are empty, so `describe` is safe.
 */
export function describeSecret(value: unknown): string {
  const shown = typeof value === 'number' || typeof value === 'bigint' || isDate(value)
  if (!shown) return describe(value)
  const kind = isDate(value) ? 'a Date' : `a ${typeof value}`
  return `${kind} (\`${maskSecret(String(value))}\`; not shown in full: it may be a credential)`
}

/** The signature of `body` under `secret`, synchronously. Used on the delivery hot path. */
export function signSync(body: string | Uint8Array, secret: string): string {
  if (typeof secret !== 'string' || secret === '') {
    throw new ConfigError('secret', `Expected \`secret\` to be a non-empty string, got ${describeSecret(secret)}.`)
  }
  if (typeof body === 'string' || body instanceof Uint8Array) return toHex(hmacSha1(secret, body))
  throw new ValidationError('body', `Expected \`body\` to be a string or a Uint8Array, got ${describe(body)}.`)
}

/**
 * The signature of `body` under `secret`: the lowercase hex HMAC-SHA1 of the UTF-8 body, the value
 * of `X-Signature`.
 * Rejects with `ConfigError` for an empty or non-string secret and `ValidationError` for a body
 * that is not a string or bytes. Uses the runtime's own HMAC where there is one (Node, Bun, Deno),
 * else a pure-JS one with the same result.
 *
 * @example
 * ```ts
 * import { sign, SIGNATURE_HEADER } from 'isomorphic-analytics/webhooks'
 *
 * const body = JSON.stringify(payload)
 * await fetch(url, {
 *   method: 'POST',
 *   headers: { 'Content-Type': 'application/json', [SIGNATURE_HEADER]: await sign(body, secret) },
 *   body, // exactly the string that was signed
 * })
 * ```
 */
export async function sign(body: string | Uint8Array, secret: string): Promise<string> {
  return signSync(body, secret)
}

/** Compares two byte arrays in time that depends only on their length. */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  // Stryker disable next-line EqualityOperator: one index past the end reads undefined ^ undefined, 0.
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i]
  return diff === 0
}

function verifyNow(rawBody: unknown, signature: unknown, secret: unknown): boolean {
  if (typeof signature !== 'string' || typeof secret !== 'string' || secret === '') return false
  const hex = signature.trim()
  if (!SIGNATURE_PATTERN.test(hex)) return false
  const given = new Uint8Array(20)
  // Stryker disable next-line EqualityOperator: a write past the end of a typed array does nothing.
  for (let i = 0; i < 20; i++) given[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16)
  const body = typeof rawBody === 'string' ? rawBody : toBytes(rawBody as RawBody)
  // Stryker disable next-line ConditionalExpression: hashing `undefined` throws, and verifySignature answers false.
  if (body === undefined) return false
  return timingSafeEqual(hmacSha1(secret, body), given)
}

/**
 * Whether `signature` (the `X-Signature` header) is the HMAC-SHA1 of `rawBody` under `secret`.
 * Pass the body exactly as received (string or bytes). The comparison is constant-time. Resolves
 * `false`, never rejects, for a missing, malformed or wrong signature, a missing secret, or a body
 * of another type. Hex digits are accepted in either case.
 *
 * @example
 * ```ts
 * import { verifySignature } from 'isomorphic-analytics/webhooks'
 *
 * // Node http: the raw bytes as they arrived, never a re-serialised parse of them.
 * const raw = Buffer.concat(chunks)
 * if (!(await verifySignature(raw, req.headers['x-signature'], process.env.WEBHOOK_SECRET!))) {
 *   res.writeHead(401).end()
 *   return
 * }
 * const payload = JSON.parse(raw.toString('utf8'))
 * ```
 */
export async function verifySignature(
  rawBody: RawBody,
  signature: string | null | undefined,
  secret: string,
): Promise<boolean> {
  try {
    return verifyNow(rawBody, signature, secret)
  } catch {
    return false
  }
}
