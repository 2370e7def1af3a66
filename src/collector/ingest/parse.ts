/**
 * From a request body to the messages it carries: JSON parsing, the batch envelope, the same
 * validation as the client (`validateMessage`, exact Go v2 messages), the 32,000-byte limit, and
 * the normalisation every accepted message gets (envelope `context` and `integrations` merged
 * under its own, `timestamp` by the tracking API's rules (`event-time.ts`), `messageId` filled in
 * when absent, `receivedAt`). Integers beyond 2^53 stay exact (`exact-json.ts`).
 *
 * One bad message rejects the whole request (400 naming it, e.g. `batch[3].event`): a batch is
 * accepted or refused as a unit, so a client never has to guess which half arrived.
 */
import { INGEST_MAX_MESSAGE_BYTES, MAX_DEPTH } from '../../limits.js'
import { serializeMessage } from '../../message/serialize.js'
import { MESSAGE_TYPES, type MessageType } from '../../message/types.js'
import { describe, isPlainObject, tooDeep, validateMessage } from '../../message/validate.js'
import { randomUUID } from '#platform'
import { badRequest, fromMessageError } from '../http/errors.js'
import { assign, mergeUnder } from '../../message/merge.js'
import { eventTime } from './event-time.js'
import { parseExact, stringifyExact, type ParsedJson } from '../../message/exact-json.js'
import { describeJsonSyntaxError } from '../../message/json-syntax.js'
import { nonFiniteAsNull } from '../../message/non-finite.js'

/**
 * A message as the collector accepted it and forwards it: validated, with the batch's `context` and
 * `integrations` merged under its own, `timestamp` set, `messageId` filled in when absent, and
 * `receivedAt`.
 */
export type Message = Record<string, unknown> & { type: MessageType }

/** What a request body is: a batch, or one call of a type given by the path. */
export type BodyKind = 'batch' | MessageType

export function parseJson(text: string): ParsedJson {
  if (text.trim() === '') throw badRequest('INVALID_JSON', 'Request body is empty; expected JSON.', 'body')
  try {
    return parseExact(text)
  } catch {
    // Python's NaN and Infinity, read as null (../../message/non-finite.ts).
    const finite = nonFiniteAsNull(text)
    if (finite !== undefined) {
      try {
        return parseExact(finite)
      } catch {
        // Not JSON for another reason: named below, on the text as sent.
      }
    }
    // Not the parser's message: it quotes the body, where a write key may be.
    throw badRequest('INVALID_JSON', `Request body is not valid JSON: ${describeJsonSyntaxError(text)}.`, 'body')
  }
}

/**
 * A body `parseJson` read inexactly (`inexact`: deeper than any message may nest, with a long
 * integer in it) whose messages all passed: what nests that deep is beside them, and the body's
 * int64s may have been rounded. Refused rather than forwarded with other digits.
 */
export function tooDeepBeside() {
  return badRequest('VALIDATION', `Request body nests objects and arrays more than ${MAX_DEPTH + 2} levels deep beside its messages, so the integers beyond 2^53 in it cannot be read exactly. Send no member that nests that deep.`, 'body')
}

interface Envelope {
  context: Record<string, unknown> | undefined
  integrations: Record<string, unknown> | undefined
  sentAt: unknown
  receivedAt: string
  /** Whether the body holds a `bigint` (an integer beyond 2^53). */
  hasBigInt: boolean
  /** No message of this body can break the size or depth limit (`withinMessageLimits`). */
  withinLimits: boolean
}

/**
 * Whether no message of the body `text` can pass the 32,768-byte limit or the depth limit, so the
 * check of each (one `JSON.stringify` per message, beside the one of its payload) can be skipped.
 * A message is made of disjoint parts of the body (its entry, the envelope's `context` and
 * `integrations`) and its `type`; parsed JSON written again is no longer than its text, but for
 * numbers in exponent form (`1e20` comes out as 21 digits: those bodies take the check) and
 * integers beyond 2^53 (`hasBigInt`: written exactly, checked). UTF-8 takes at most 3 bytes per
 * UTF-16 unit, which leaves a wide margin. Small batches (a browser's, 20 events) pass.
 */
export function withinMessageLimits(text: string, hasBigInt: boolean): boolean {
  return !hasBigInt && text.length * 3 + 64 <= INGEST_MAX_MESSAGE_BYTES && !/\d[eE]/.test(text) && !tooDeep(text, MAX_DEPTH)
}

/**
 * Members the tracking API defines, which the vendor's Python and Ruby libraries send as `null`
 * when the caller left them out (`"anonymousId": null` beside a `userId`): read as absent, as the
 * service reads them. A required one (`event` of a track) is then missing, and named as such.
 */
const ABSENT_WHEN_NULL = new Set([
  'userId', 'anonymousId', 'name', 'category', 'event', 'groupId', 'previousId', 'messageId',
  'traits', 'properties', 'context', 'integrations', 'timestamp', 'originalTimestamp', 'sentAt',
])

/**
 * The members the tracking API defines as objects, which PHP writes as `[]` when empty (its
 * `json_encode` of an empty array: analytics-php sends `'integrations' => []` so): read as `{}`.
 */
const OBJECT_MEMBERS = new Set(['traits', 'properties', 'context', 'integrations'])
const isEmptyArray = (value: unknown): boolean => Array.isArray(value) && value.length === 0

/**
 * Identifiers the vendor's Ruby library (and JavaScript callers) may send as JSON numbers
 * (`user_id: 42` goes out as `"userId": 42`): read as their decimal text, digits kept exactly
 * (an integer beyond 2^53 arrives as a `bigint`), so receivers always get the string the
 * webhook payload defines.
 */
const ID_MEMBERS = new Set(['userId', 'anonymousId', 'groupId', 'previousId'])

const isNumericId = (value: unknown) => typeof value === 'bigint' || (typeof value === 'number' && Number.isFinite(value))

function envelopeObject(body: Record<string, unknown>, field: 'context' | 'integrations') {
  const value = body[field]
  if (value === undefined || value === null || isEmptyArray(value)) return undefined
  if (!isPlainObject(value)) {
    throw badRequest('VALIDATION', `Expected \`${field}\` to be an object, got ${describe(value)}.`, field)
  }
  return value
}

/**
 * The messages of a request body, validated and normalised; throws a 400 naming the first problem.
 * `withinLimits`: `withinMessageLimits` of the body's text (each message's size is not checked).
 */
export function extractMessages(kind: BodyKind, body: unknown, receivedAt: string, hasBigInt: boolean, withinLimits: boolean): Message[] {
  if (!isPlainObject(body)) {
    const expected = kind === 'batch' ? 'a JSON object { batch: [...] }' : `a JSON object (the ${kind} message)`
    throw badRequest('VALIDATION', `Expected the request body to be ${expected}, got ${describe(body)}.`, 'body')
  }
  if (kind !== 'batch') {
    const envelope: Envelope = { context: undefined, integrations: undefined, sentAt: undefined, receivedAt, hasBigInt, withinLimits }
    return [normalise(body, kind, envelope, '')]
  }
  const { batch } = body
  if (!Array.isArray(batch)) {
    throw badRequest('VALIDATION', `Expected \`batch\` to be an array of messages, got ${describe(batch)}.`, 'batch')
  }
  const envelope: Envelope = {
    context: envelopeObject(body, 'context'),
    integrations: envelopeObject(body, 'integrations'),
    sentAt: body.sentAt ?? undefined,
    receivedAt,
    hasBigInt,
    withinLimits,
  }
  return batch.map((entry: unknown, i) => {
    const at = `batch[${i}]`
    if (!isPlainObject(entry)) {
      throw badRequest('VALIDATION', `Expected \`${at}\` to be a message object, got ${describe(entry)}.`, at)
    }
    return normalise(entry, messageType(entry.type, `${at}.type`), envelope, at)
  })
}

function messageType(value: unknown, field: string): MessageType {
  if (typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value)) return value as MessageType
  throw badRequest('VALIDATION', `Expected \`${field}\` to be one of ${MESSAGE_TYPES.join(', ')}, got ${describe(value)}.`, field)
}

function normalise(entry: Record<string, unknown>, type: MessageType, envelope: Envelope, at: string): Message {
  if (at === '' && entry.type !== undefined && entry.type !== type) {
    throw badRequest('VALIDATION', `Expected \`type\` to be ${JSON.stringify(type)} on /v1/${type}, got ${describe(entry.type)}.`, 'type')
  }
  // A shallow copy (the parsed body is not mutated) without the write key: a credential, not
  // part of the message, never forwarded; nor the members whose `null` means absent. A plain
  // loop: object rest/spread is slower on this path.
  const message: Record<string, unknown> = {}
  for (const key in entry) {
    const value = entry[key]
    if (key === 'writeKey' || (value === null && ABSENT_WHEN_NULL.has(key))) continue
    if (isEmptyArray(value) && OBJECT_MEMBERS.has(key)) assign(message, key, {})
    else assign(message, key, isNumericId(value) && ID_MEMBERS.has(key) ? String(value) : value)
  }
  message.type = type
  try {
    // The message's own members first: its `context` and `integrations` must be objects before
    // the envelope's are merged under them.
    validateMessage(type, message)
    if (envelope.context !== undefined) {
      message.context = mergeUnder(envelope.context, message.context as Record<string, unknown> | undefined)
    }
    if (envelope.integrations !== undefined) {
      message.integrations = mergeUnder(envelope.integrations, message.integrations as Record<string, unknown> | undefined)
    }
    if (!envelope.withinLimits) checkSize(message, envelope.hasBigInt)
  } catch (error) {
    throw fromMessageError(error, at) ?? error
  }
  // Validation and the size limit apply to what the caller sent; then the server's own fields.
  // (eventTime's 400s already name the full field: `batch[2].originalTimestamp`, `sentAt`.)
  if (message.timestamp === undefined) message.timestamp = eventTime(message, envelope.sentAt, envelope.receivedAt, at)
  if (message.messageId === undefined) message.messageId = randomUUID()
  if (message.sentAt === undefined && typeof envelope.sentAt === 'string') message.sentAt = envelope.sentAt
  message.receivedAt = envelope.receivedAt
  return message as Message
}

/** The 32,768-byte (32 KiB) and depth limits, on the message's exact JSON (a bigint counts its digits). */
function checkSize(message: Record<string, unknown>, hasBigInt: boolean): void {
  serializeMessage(message, INGEST_MAX_MESSAGE_BYTES, hasBigInt ? stringifyExact(message, true) : undefined)
}
