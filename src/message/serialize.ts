/**
 * Serialises a message once: the JSON string is what is sent, and its exact UTF-8 length decides
 * the per-message limit and how messages pack into batches.
 *
 * Two things plain `JSON.stringify` gets wrong are handled here, off the hot path: a `bigint` is
 * written as its digits (a JSON number of any size; `JSON.stringify` throws on it), and a `Map` or
 * `Set` (which JSON would silently turn into `{}`) is refused, naming the field.
 */
import { MessageTooLargeError, messageOf, ValidationError } from '../errors.js'
import { MAX_DEPTH, MAX_MESSAGE_BYTES } from '../limits.js'
import { deeperThan, refuseCollections, tooDeep, tooDeepError } from './validate.js'
import { utf8ByteLength } from '#platform'

export interface Serialized {
  json: string
  bytes: number
}

/** `json`: the message's JSON text, when the caller has already written it (see buildMessage). */
export function serializeMessage(message: Record<string, unknown>, limit = MAX_MESSAGE_BYTES, json?: string): Serialized {
  try {
    json ??= JSON.stringify(message)
  } catch (error) {
    json = stringifyWithBigInts(message, error)
  }
  if (tooDeep(json, MAX_DEPTH)) throw tooDeepError(message)
  // A Map or Set always comes out as `{}`: only then is the message walked to find one.
  if (json.includes('{}')) refuseCollections(message, '')
  const bytes = utf8ByteLength(json)
  if (bytes > limit) throw new MessageTooLargeError(bytes, limit)
  return { json, bytes }
}

/** `JSON.stringify`, with each `bigint` written as its digits. Rethrows what has another cause. */
function stringifyWithBigInts(message: Record<string, unknown>, firstError: unknown): string {
  // A NUL-led marker with a random nonce, which JSON writes as `\u0000…`: no caller's string matches it.
  const nonce = Math.random().toString(36).slice(2)
  let sawBigInt = false
  let json: string
  try {
    json = JSON.stringify(message, (_key, value: unknown) =>
      typeof value === 'bigint' ? ((sawBigInt = true), `\u0000${nonce}${value}`) : value)
  } catch (error) {
    throw unserialisable(message, error)
  }
  if (!sawBigInt) throw unserialisable(message, firstError)
  return json.replace(new RegExp(`"\\\\u0000${nonce}(-?\\d+)"`, 'g'), '$1')
}

/** Names the top-level field that cannot be serialised (circular reference, …). */
function unserialisable(message: Record<string, unknown>, cause: unknown): ValidationError {
  // A structure deep enough to overflow JSON.stringify's stack (a RangeError, or Firefox's
  // InternalError): report the nesting limit, not the engine's "Maximum call stack size exceeded".
  if (!(cause instanceof TypeError) && deeperThan(message, MAX_DEPTH)) return tooDeepError(message)
  const field = Object.keys(message).find((key) => {
    try {
      JSON.stringify(message[key], (_k, v: unknown) => (typeof v === 'bigint' ? 0 : v))
    } catch {
      return true
    }
  }) ?? 'message'
  return new ValidationError(field, `Cannot serialise \`${field}\` to JSON: ${messageOf(cause)}`, { cause })
}
