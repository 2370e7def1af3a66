/**
 * Serialises a message once: the JSON string is what is sent, and its exact UTF-8 length decides
 * the per-message limit and how messages pack into batches.
 *
 * Two things plain `JSON.stringify` gets wrong are handled here, off the hot path: a `bigint` is
 * written as its digits (a JSON number of any size; `JSON.stringify` throws on it), and a `Map` or
 * `Set` (which JSON would silently turn into `{}`) is refused, naming the field.
 */
import { MessageTooLargeError, ValidationError } from '../errors.js'
import { MAX_MESSAGE_BYTES, utf8Length } from '../limits.js'

export interface Serialized {
  json: string
  bytes: number
}

export function serializeMessage(message: Record<string, unknown>, limit = MAX_MESSAGE_BYTES): Serialized {
  let json: string
  try {
    json = JSON.stringify(message)
  } catch (error) {
    json = stringifyWithBigInts(message, error)
  }
  // A Map or Set always comes out as `{}`: only then is the message walked to find one.
  if (json.includes('{}')) refuseCollections(message, '')
  const bytes = utf8Length(json)
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

function refuseCollections(value: unknown, path: string, seen = new Set<object>()): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return
  if (value instanceof Map || value instanceof Set) {
    const [kind, instead] = value instanceof Map ? ['Map', 'Object.fromEntries(map)'] : ['Set', '[...set]']
    throw new ValidationError(path, `Cannot send \`${path}\`: it is a ${kind}, which JSON would turn into \`{}\`. Pass ${instead} instead.`)
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return
  seen.add(value)
  for (const [key, child] of Object.entries(value)) {
    refuseCollections(child, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, seen)
  }
}

/** Names the top-level field that cannot be serialised (circular reference, …). */
function unserialisable(message: Record<string, unknown>, cause: unknown): ValidationError {
  let field = 'message'
  for (const key of Object.keys(message)) {
    try {
      JSON.stringify(message[key], (_k, v: unknown) => (typeof v === 'bigint' ? 0 : v))
    } catch {
      field = key
      break
    }
  }
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new ValidationError(field, `Cannot serialise \`${field}\` to JSON: ${reason}`, { cause })
}
