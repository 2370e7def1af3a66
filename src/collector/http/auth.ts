/**
 * Who is sending: the write key from HTTP Basic auth (user = key, password empty) or, for the
 * browser's CORS-free `text/plain` form, from `writeKey` in the body. Admin endpoints use a bearer
 * token compared in constant time.
 */
import type { RequestHead } from './direct.js'
import { HttpProblem, unauthorized } from './errors.js'

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * The write key of a `Basic` Authorization header; `undefined` when there is no header.
 * A header that is present but unreadable is a 401 saying why.
 */
export function writeKeyFromHeader(request: RequestHead): string | undefined {
  const header = request.headers.get('authorization')
  if (header === null) return undefined
  // A header seen before is decoded already (every request passes here: no other work first).
  const known = decodedKeys.get(header)
  if (known !== undefined) return known
  // An OAuth token (analytics-python with OAuth on sends one, its `writeKey` in the body too): not
  // a write key, nor the collector's to check; the body's `writeKey` names the source.
  if (bearerToken(header) !== undefined) return undefined
  const key = decodeBasic(header)
  // A sender repeats one header on every request: decode each distinct value once, in a bounded
  // memo (oldest out first) so a stream of distinct headers cannot grow it. Failures are not kept.
  if (decodedKeys.size >= MEMO_LIMIT) decodedKeys.delete(decodedKeys.keys().next().value as string)
  decodedKeys.set(header, key)
  return key
}

const MEMO_LIMIT = 1000
const decodedKeys = new Map<string, string>()

function decodeBasic(header: string): string {
  const match = /^basic\s+(\S*)\s*$/i.exec(header.trim())
  if (!match) throw unauthorized('Expected `Authorization: Basic base64(writeKey:)`.')
  const encoded = match[1]
  if (encoded.length % 4 === 1 || !BASE64.test(encoded)) {
    throw unauthorized('The Basic credentials are not valid base64.')
  }
  let decoded: string
  try {
    const binary = atob(encoded)
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw unauthorized('The Basic credentials are not valid base64 of UTF-8 text.')
  }
  const colon = decoded.indexOf(':')
  const key = colon === -1 ? decoded : decoded.slice(0, colon)
  if (key === '') throw unauthorized('The Basic credentials carry an empty write key.')
  return key
}

/**
 * The write key of RudderStack's beacon form, `?writeKey=KEY` (a beacon cannot set headers), as
 * strict as Basic auth: exactly one non-empty key, and an `Authorization` header, if one is sent
 * too, must name the same key.
 */
export function writeKeyFromQuery(request: RequestHead): string {
  const keys = new URL(request.url).searchParams.getAll('writeKey')
  if (keys.length === 0) throw unauthorized('Missing write key: send `?writeKey=KEY` in the URL.')
  if (keys.length > 1) throw unauthorized('Expected one `writeKey` in the URL, got several.')
  const [key] = keys
  if (key === '') throw unauthorized('The `writeKey` in the URL is empty.')
  const headerKey = writeKeyFromHeader(request)
  if (headerKey !== undefined && headerKey !== key) {
    throw unauthorized('The `writeKey` in the URL and the Basic credentials name different write keys.')
  }
  return key
}

/** `writeKey` of a parsed body, when it is a non-empty string. */
export function writeKeyFromBody(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const key = (body as { writeKey?: unknown }).writeKey
  if (key === undefined) return undefined
  if (typeof key !== 'string' || key === '') {
    throw new HttpProblem(401, 'UNAUTHORIZED', 'Expected `writeKey` to be a non-empty string.', { field: 'writeKey' })
  }
  return key
}

/** The token of an `Authorization: Bearer <token>` header (the admin token, or an OAuth one on ingest). */
const bearerToken = (header: string | null): string | undefined => (header === null ? undefined : /^bearer\s+(\S+)\s*$/i.exec(header.trim())?.[1])

/** `request`: a Bearer token it carries is named as what it is not. */
export const missingWriteKey = (request: RequestHead) =>
  unauthorized(bearerToken(request.headers.get('authorization')) !== undefined
    ? 'Missing write key: a Bearer token (OAuth) is not one; send `writeKey` in the body, or `Authorization: Basic base64(writeKey:)`.'
    : 'Missing write key: send `Authorization: Basic base64(writeKey:)` or `writeKey` in the body.')

export const unknownWriteKey = () => unauthorized('Unknown write key.')

/** Checks `Authorization: Bearer <token>` against the admin token; a 401 when it does not match. */
export async function requireBearer(request: Request, token: string): Promise<void> {
  const sent = bearerToken(request.headers.get('authorization'))
  if (sent === undefined) throw unauthorized('Admin endpoints need `Authorization: Bearer <admin token>`.', 'Bearer')
  if (!(await constantTimeEqual(sent, token))) throw unauthorized('Wrong admin token.', 'Bearer')
}

/**
 * Compares two strings in time that depends on neither their contents nor their lengths: both are
 * hashed (SHA-256) and the fixed-size digests compared without an early exit.
 */
export async function constantTimeEqual(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder()
  const [x, y] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ])
  const left = new Uint8Array(x)
  const right = new Uint8Array(y)
  let difference = 0
  for (let i = 0; i < left.length; i++) difference |= left[i] ^ right[i]
  return difference === 0
}
