/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/), beside `X-Signature`:
 * `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`, one `v1,<base64>` per
 * secret, space-separated: the base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed with the
 * bytes a `whsec_<base64>` secret encodes. Two secrets sign during a rotation, so a receiver that
 * knows either accepts. The timestamp lets a receiver refuse a replayed request.
 *
 * `webhook-id` is derived from the body (the first 16 bytes of its SHA-256): the same bytes have
 * the same id across retries, retries by hand and replays, with nothing to store.
 *
 * Hashing is synchronous, as for `X-Signature` (signature.ts): the runtime's own crypto where it
 * offers it (`node:crypto`: Node, Bun, Deno), else `@noble/hashes` (browsers, workers). WebCrypto
 * would make signing asynchronous on the delivery path for no gain in what is computed.
 */
import { ConfigError, SignatureError } from '../errors.js'
import { describe } from '../message/validate.js'
import { nativeHmacSha256, nativeSha256 } from '../platform/hmac.js'
import { describeSecret, timingSafeEqual, type RawBody } from './signature.js'
import { hmac } from '@noble/hashes/hmac'
import { sha256 } from '@noble/hashes/sha2'

export const STANDARD_ID_HEADER = 'webhook-id'
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp'
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature'

const SECRET_PREFIX = 'whsec_'
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const encoder = new TextEncoder()

/** The runtime's own hashes, or none: tests pass `PORTABLE` to check the pure-JS path. */
export interface Sha256Kit {
  hmac?: (key: Uint8Array, body: string | Uint8Array) => Uint8Array
  hash?: (body: string | Uint8Array) => Uint8Array
}
export const NATIVE: Sha256Kit = { hmac: nativeHmacSha256, hash: nativeSha256 }
export const PORTABLE: Sha256Kit = {}

const bytesOf = (body: string | Uint8Array): Uint8Array => (typeof body === 'string' ? encoder.encode(body) : body)

function hmacSha256(key: Uint8Array, body: string | Uint8Array, kit: Sha256Kit): Uint8Array {
  return kit.hmac ? kit.hmac(key, body) : hmac(sha256, key, bytesOf(body))
}

function toBase64(bytes: Uint8Array): string {
  let binary = ''
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i])
  return btoa(binary)
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
  return bytes
}

/** The key a `whsec_<base64>` secret encodes; a `ConfigError` naming `option` otherwise. */
export function standardKey(option: string, secret: unknown): Uint8Array {
  const expected = `Expected \`${option}\` to be a Standard Webhooks secret, \`whsec_\` followed by base64`
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) {
    throw new ConfigError(option, `${expected}, got ${typeof secret === 'string' ? 'a string without that prefix' : describeSecret(secret)}.`)
  }
  const encoded = secret.slice(SECRET_PREFIX.length)
  if (!BASE64.test(encoded) || encoded.length % 4 === 1) {
    throw new ConfigError(option, `${expected}, got one whose rest is not base64. (The value is not shown: it is a credential.)`)
  }
  return fromBase64(encoded)
}

/** One or two secrets (two during a rotation), as keys; a `ConfigError` naming `option` otherwise. */
export function standardKeys(option: string, secrets: unknown): Uint8Array[] {
  const list = typeof secrets === 'string' ? [secrets] : secrets
  if (!Array.isArray(list) || list.length < 1 || list.length > 2) {
    throw new ConfigError(option, `Expected \`${option}\` to be an array of one or two \`whsec_…\` secrets, got ${Array.isArray(list) ? `${list.length} entries` : describe(list)}.`)
  }
  return list.map((secret, i) => standardKey(`${option}[${i}]`, secret))
}

/** `msg_` and the first 16 bytes of the body's SHA-256, base64url: stable for the same bytes. */
export function webhookIdOf(body: string, kit: Sha256Kit = NATIVE): string {
  const digest = kit.hash ? kit.hash(body) : sha256(encoder.encode(body))
  return `msg_${toBase64(digest.subarray(0, 16)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`
}

/** `v1,<base64>` per key, space-separated, over `${id}.${seconds}.${body}`. */
export function standardSignature(keys: readonly Uint8Array[], id: string, seconds: number, body: string, kit: Sha256Kit = NATIVE): string {
  const content = `${id}.${seconds}.${body}`
  return keys.map((key) => `v1,${toBase64(hmacSha256(key, content, kit))}`).join(' ')
}

/** The three headers of one attempt at `nowMs`. */
export function standardHeaders(keys: readonly Uint8Array[], id: string, nowMs: number, body: string): Record<string, string> {
  const seconds = Math.floor(nowMs / 1000)
  return {
    [STANDARD_ID_HEADER]: id,
    [STANDARD_TIMESTAMP_HEADER]: String(seconds),
    [STANDARD_SIGNATURE_HEADER]: standardSignature(keys, id, seconds, body),
  }
}

/** Request headers as fetch (`Headers`) or Node (`req.headers`) give them. */
export type HeadersLike = Headers | Readonly<Record<string, string | readonly string[] | undefined>>

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const record = headers as Record<string, string | readonly string[] | undefined>
  const key = Object.keys(record).find((k) => k.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value.join(' ') : (value as string | undefined)
}

/** The options of {@link verifyStandardWebhook}: the replay window and the clock. */
export interface VerifyStandardOptions {
  /** How far `webhook-timestamp` may be from now, either way, in seconds. Default 300. */
  toleranceSeconds?: number
  /** The clock, in ms. Default `Date.now`. */
  now?: () => number
}

function bodyBytes(rawBody: RawBody): Uint8Array | undefined {
  if (typeof rawBody === 'string') return encoder.encode(rawBody)
  if (rawBody instanceof Uint8Array) return rawBody
  if (rawBody instanceof ArrayBuffer) return new Uint8Array(rawBody)
  if (ArrayBuffer.isView(rawBody)) return new Uint8Array(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength)
  return undefined
}

/**
 * Resolves with the request's `webhook-id` and timestamp when one of its `v1` signatures is the
 * HMAC of `rawBody` (exactly as received) under one of `secrets` (one or two `whsec_…`) and its
 * timestamp is within `toleranceSeconds` of now; rejects with `SignatureError` (`reason`:
 * `missing-header`, `bad-timestamp`, `stale-timestamp`, `future-timestamp`,
 * `no-matching-signature`, `bad-body`) otherwise, and with `ConfigError` for bad secrets.
 */
export async function verifyStandardWebhook(
  rawBody: RawBody,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyStandardOptions = {},
): Promise<{ id: string; timestamp: number }> {
  return verifyStandardNow(rawBody, headers, standardKeys('secrets', secrets), options, NATIVE)
}

/** `verifyStandardWebhook` with keys already decoded and the hashes to use. */
export function verifyStandardNow(rawBody: RawBody, headers: HeadersLike, keys: readonly Uint8Array[], options: VerifyStandardOptions, kit: Sha256Kit): { id: string; timestamp: number } {
  const tolerance = options.toleranceSeconds ?? 300
  if (typeof tolerance !== 'number' || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new ConfigError('toleranceSeconds', `Expected \`toleranceSeconds\` to be a number ≥ 0, got ${describe(tolerance)}.`)
  }
  const id = header(headers, STANDARD_ID_HEADER)
  const stamp = header(headers, STANDARD_TIMESTAMP_HEADER)
  const signatures = header(headers, STANDARD_SIGNATURE_HEADER)
  for (const [name, value] of [[STANDARD_ID_HEADER, id], [STANDARD_TIMESTAMP_HEADER, stamp], [STANDARD_SIGNATURE_HEADER, signatures]] as const) {
    if (value === undefined || value === '') throw new SignatureError('missing-header', `Missing the \`${name}\` header.`)
  }
  if (!/^\d{1,12}$/.test(stamp!)) throw new SignatureError('bad-timestamp', `Expected \`${STANDARD_TIMESTAMP_HEADER}\` to be whole seconds since 1970, got ${describe(stamp!.slice(0, 40))}.`)
  const timestamp = Number(stamp)
  const nowSeconds = Math.floor((options.now ?? Date.now)() / 1000)
  if (nowSeconds - timestamp > tolerance) {
    throw new SignatureError('stale-timestamp', `\`${STANDARD_TIMESTAMP_HEADER}\` is ${nowSeconds - timestamp} s old, more than the ${tolerance} s allowed: a replayed or long-delayed request.`)
  }
  if (timestamp - nowSeconds > tolerance) {
    throw new SignatureError('future-timestamp', `\`${STANDARD_TIMESTAMP_HEADER}\` is ${timestamp - nowSeconds} s ahead of this clock, more than the ${tolerance} s allowed.`)
  }
  const body = bodyBytes(rawBody)
  if (body === undefined) throw new SignatureError('bad-body', `Expected the raw body as a string or bytes, got ${describe(rawBody)}.`)
  const prefix = encoder.encode(`${id}.${stamp}.`)
  const content = new Uint8Array(prefix.length + body.length)
  content.set(prefix)
  content.set(body, prefix.length)
  const expected = keys.map((key) => hmacSha256(key, content, kit))
  for (const given of signatures!.split(' ')) {
    const [version, value] = given.split(',', 2)
    if (version !== 'v1' || value === undefined || !BASE64.test(value)) continue
    const bytes = fromBase64(value)
    if (expected.some((digest) => timingSafeEqual(digest, bytes))) return { id: id!, timestamp }
  }
  throw new SignatureError('no-matching-signature', `No \`v1\` signature in \`${STANDARD_SIGNATURE_HEADER}\` matches the body under the secret${keys.length > 1 ? 's' : ''} given.`)
}
