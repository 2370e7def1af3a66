/**
 * Validation of the six calls, shared by the client (on the caller's input) and the collector
 * (on parsed request bodies), with the Go v2 library's exact messages; and the shape checks a
 * message's JSON must pass besides its size (at the end).
 */
import { ValidationError } from '../errors.js'
import { MAX_DEPTH } from '../limits.js'
import type { MessageType } from './types.js'

export const MISSING_IDENTITY = "You must pass either an 'anonymousId' or 'userId'."

const REQUIRED: Record<MessageType, ReadonlyArray<readonly [field: string, message: string]>> = {
  identify: [],
  track: [['event', "You must pass 'event'."]],
  page: [],
  screen: [],
  group: [['groupId', "You must pass a 'groupId'."]],
  alias: [
    ['userId', "You must pass a 'userId'."],
    ['previousId', "You must pass a 'previousId'."],
  ],
}

const OPTIONAL_STRINGS = ['userId', 'anonymousId', 'name', 'category', 'event', 'groupId', 'previousId', 'messageId']
const OPTIONAL_OBJECTS = ['traits', 'properties', 'context', 'integrations']

/** A date, or a date-time with an optional offset (captured: `Z`, `+02`, `+0200` or `+02:00`). */
const ISO_8601 =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i

/**
 * A plain object: `{}` or `Object.create(null)`, from this realm or another one (an iframe, a
 * `vm` context), whose `Object.prototype` is a different object with the same shape.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false
  const proto = Object.getPrototypeOf(value)
  return (proto === null || Object.getPrototypeOf(proto) === null) && Object.prototype.toString.call(value) === '[object Object]'
}

/** A `Date`, from any realm. */
export const isDate = (value: unknown): value is Date => Object.prototype.toString.call(value) === '[object Date]'

/**
 * What a value is, never what it holds: `null`, `undefined`, 'a number', 'a string', 'an array',
 * 'an object' (a plain one, from any realm), 'a Map', 'a Date', 'a function'. For values that may
 * be secrets (a write key given as a number) or that are not ours to show.
 */
export function kindOf(value: unknown): string {
  if (value == null) return `\`${value}\``
  if (Array.isArray(value)) return 'an array'
  const type = typeof value
  const name = type !== 'object' || isPlainObject(value) ? type : (value as { constructor?: { name?: string } }).constructor?.name || 'object'
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`
}

/** Short, safe rendering of a bad value for an error message: a string's first 40 characters, a number, a date or a boolean as it is, else `kindOf`. */
export function describe(value: unknown): string {
  const type = typeof value
  if (type === 'string') return `\`${JSON.stringify((value as string).length > 40 ? (value as string).slice(0, 40) + '…' : value)}\``
  // A Date, a boolean, a number, a bigint: shown as they are.
  return isDate(value) || /^[bn]/.test(type) ? `\`${value as string}\`` : kindOf(value)
}

/**
 * ``Expected `name` to be what, got …``: how a bad value is named, in a `ConfigError` or a
 * `ValidationError`. With `secret`, only its kind (`kindOf`): the value may be a credential.
 */
export const expected = <E>(Kind: new (name: string, message: string) => E, name: string, what: string, value: unknown, secret?: boolean): E =>
  new Kind(name, `Expected \`${name}\` to be ${what}, got ${(secret ? kindOf : describe)(value)}.`)

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

const twoDigits = (text: string, at: number): number => (text.charCodeAt(at) - 48) * 10 + text.charCodeAt(at + 1) - 48

/**
 * The instant an ISO 8601 string names, in ms since the epoch; `NaN` when the string is not one
 * we accept. A date-time without an offset is read as UTC, as a date alone always is: `Date.parse`
 * reads it in the local time zone, so the same event would land hours apart depending on where it
 * was read (Python's `isoformat()` of a naive datetime writes this form). A `±hh` offset, which
 * `Date.parse` refuses, is read as `±hh:00`.
 */
export function isoInstant(text: string): number {
  const match = ISO_8601.exec(text)
  if (!match) return NaN
  const offset = match[1]
  return Date.parse(offset ? (offset.length === 3 ? `${text}:00` : text) : text.length > 10 ? `${text}Z` : text)
}

/** The instant of a timestamp that passed `isValidTimestamp`, in ms since the epoch. */
export const timestampMs = (value: Date | string): number => (isDate(value) ? value.getTime() : isoInstant(value))

/**
 * Is this a timestamp we accept: a valid Date, or an ISO 8601 string naming a real instant.
 * `Date.parse` takes any day up to 31 in every month (2024-02-30 becomes March 1st), so the day is
 * checked against the month's length.
 */
export function isValidTimestamp(value: unknown): value is Date | string {
  if (isDate(value)) return !isNaN(value.getTime())
  if (typeof value !== 'string' || isNaN(isoInstant(value))) return false
  // The regular expression fixed where the digits are: read them in place (no slices, no arrays:
  // every event the collector accepts passes here).
  const year = twoDigits(value, 0) * 100 + twoDigits(value, 2)
  const month = twoDigits(value, 5)
  const day = twoDigits(value, 8)
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  // 30 or 31 days: odd months have 31 until July, even ones from August.
  return day <= (month === 2 ? (leap ? 29 : 28) : 30 + ((month + (month >> 3)) & 1))
}

const optionalString = (value: unknown): boolean => value === undefined || typeof value === 'string'
const optionalObject = (value: unknown): boolean => value === undefined || isPlainObject(value)

/**
 * Whether `message` (a plain object) passes every check of `validateMessage`, read field by field
 * by name: each call of the client, and each message the collector takes, passes here, and the
 * checks below read fields by a variable name, a lookup several times slower (a CPU profile of a
 * loop of `track()` calls shows it). When it says no, those name the problem.
 * Exported for its test: it must agree with them on every message.
 */
export function passes(type: MessageType, message: Record<string, unknown>): boolean {
  const { userId, anonymousId, messageId, timestamp } = message
  return optionalString(userId) && optionalString(anonymousId) && optionalString(message.name) &&
    optionalString(message.category) && optionalString(message.event) && optionalString(message.groupId) &&
    optionalString(message.previousId) && optionalString(messageId) && messageId !== '' &&
    (type === 'alias' || nonEmptyString(userId) || nonEmptyString(anonymousId)) &&
    (type === 'track' ? nonEmptyString(message.event) : type === 'group' ? nonEmptyString(message.groupId)
      : type !== 'alias' || (nonEmptyString(userId) && nonEmptyString(message.previousId))) &&
    optionalObject(message.traits) && optionalObject(message.properties) && optionalObject(message.context) &&
    optionalObject(message.integrations) && (timestamp === undefined || isValidTimestamp(timestamp))
}

/** Throws a `ValidationError` naming the first problem with `message` as a call of `type`. */
export function validateMessage(type: MessageType, message: unknown): asserts message is Record<string, unknown> {
  if (isPlainObject(message) && passes(type, message)) return
  nameProblem(type, message)
}

/**
 * The checks of `validateMessage` one by one, throwing a `ValidationError` for the first that
 * fails (`passes` answers in one go, and says no only where one of these fails).
 */
export function nameProblem(type: MessageType, message: unknown): asserts message is Record<string, unknown> {
  if (!isPlainObject(message)) {
    throw new ValidationError('message', `Expected the ${type} message to be an object, got ${describe(message)}.`)
  }
  for (const [field, text] of REQUIRED[type]) {
    const value = message[field]
    if (!nonEmptyString(value)) {
      // Missing (`undefined`, `null`, `''`): the text alone; anything else is named too.
      throw new ValidationError(field, value == null || value === '' ? text : `${text} ${expected(ValidationError, field, 'a non-empty string', value).message}`)
    }
  }
  for (const field of OPTIONAL_STRINGS) {
    const value = message[field]
    if (value !== undefined && typeof value !== 'string') {
      throw expected(ValidationError, field, 'a string', value)
    }
  }
  if (type !== 'alias' && !nonEmptyString(message.userId) && !nonEmptyString(message.anonymousId)) {
    throw new ValidationError('userId', MISSING_IDENTITY)
  }
  for (const field of OPTIONAL_OBJECTS) {
    const value = message[field]
    if (value !== undefined && !isPlainObject(value)) {
      throw expected(ValidationError, field, 'an object', value)
    }
  }
  if (message.messageId === '') {
    throw expected(ValidationError, 'messageId', 'a non-empty string', '')
  }
  if (message.timestamp !== undefined && !isValidTimestamp(message.timestamp)) {
    throw expected(ValidationError, 'timestamp', 'a valid Date or ISO 8601 string', message.timestamp)
  }
}

/*
 * The shape of a message's JSON: nesting at most `MAX_DEPTH` levels, and no `Map` or `Set` (which
 * JSON turns into `{}`), each error naming the field. Shared by ./serialize.ts and the byte
 * store's parts (../queue/byte-store.ts `checkParts`).
 */

/** Throws for the first `Map` or `Set` in `value` (at `path`), naming it and what to pass instead. */
export function refuseCollections(value: unknown, path: string, seen = new Set<object>()): void {
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
export function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (levels <= 0) return true
  for (const key in value) if (deeperThan((value as Record<string, unknown>)[key], levels - 1)) return true
  return false
}

/** The error for a message nested too deep, naming its first field that is. */
export function tooDeepError(message: Record<string, unknown>): ValidationError {
  const field = Object.keys(message).find((key) => deeperThan(message[key], MAX_DEPTH - 1)) ?? 'message'
  return new ValidationError(field, `\`${field}\` nests objects and arrays too deep: a message may nest at most ${MAX_DEPTH} levels (the message itself is the first).`)
}
