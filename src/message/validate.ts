/**
 * Validation of the six calls, shared by the client (on the caller's input) and the collector
 * (on parsed request bodies), with the Go v2 library's exact messages.
 */
import { ValidationError } from '../errors.js'
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
 * checks below read fields by a variable name, a lookup several times slower (in a CPU profile of
 * a loop of `track()` calls, they were 6 % of its time). When it says no, those name the problem.
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
