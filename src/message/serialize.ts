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
import { utf8ByteLength } from '../platform/runtime.js'

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

/**
 * The checks of `serializeMessage` for a message whose text is `ownJson` (an object's JSON, the
 * caller's fields) with `stampedBytes` more (fields, ASCII, nested at most 3 deep, no `{}`,
 * closing the object) written after them: on `ownJson` alone, so the whole text is never made.
 * The text's UTF-8 length. Node only (../client/build-message.ts).
 */
export function checkParts(message: Record<string, unknown>, ownJson: string, stampedBytes: number): number {
  if (tooDeep(ownJson, MAX_DEPTH)) throw tooDeepError(message)
  if (ownJson.includes('{}')) refuseCollections(message, '')
  // `{…}` becomes `{…,` (the same bytes), and `{}` becomes `{`.
  const bytes = (ownJson.length > 2 ? utf8ByteLength(ownJson) : 1) + stampedBytes
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES)
  return bytes
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
  // By its tag, not `instanceof`: a Map from another realm (an iframe, a `vm` context) too.
  const kind = /^\[object (Map|Set)\]$/.exec(Object.prototype.toString.call(value))?.[1]
  if (kind) {
    const instead = kind === 'Map' ? 'Object.fromEntries(map)' : '[...set]'
    throw new ValidationError(path, `Cannot send \`${path}\`: it is a ${kind}, which JSON would turn into \`{}\`. Pass ${instead} instead.`)
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return
  seen.add(value)
  for (const [key, child] of Object.entries(value)) {
    refuseCollections(child, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, seen)
  }
}

/** Whether `json` (any JSON text) nests objects and arrays more than `max` levels (string contents are skipped). */
export function tooDeep(json: string, max: number): boolean {
  // Depth never exceeds the number of `{` and `[`: a few native searches clear almost every message.
  let opens = 0
  for (const bracket of '{[') for (let i = json.indexOf(bracket); i >= 0 && opens <= max; i = json.indexOf(bracket, i + 1)) opens++
  if (opens <= max) return false
  let depth = 0
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (c === '"') {
      while (json[++i] !== '"') if (json[i] === '\\') i++
    } else if (c === '{' || c === '[') {
      if (++depth > max) return true
    } else if (c === '}' || c === ']') depth--
  }
  return false
}

/** Is `value` nested more than `levels` deep? Recursion stops at `levels`, so it cannot overflow. */
function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (levels <= 0) return true
  for (const key in value) if (deeperThan((value as Record<string, unknown>)[key], levels - 1)) return true
  return false
}

function tooDeepError(message: Record<string, unknown>): ValidationError {
  const field = Object.keys(message).find((key) => deeperThan(message[key], MAX_DEPTH - 1)) ?? 'message'
  return new ValidationError(field, `\`${field}\` nests objects and arrays too deep: a message may nest at most ${MAX_DEPTH} levels (the message itself is the first).`)
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
