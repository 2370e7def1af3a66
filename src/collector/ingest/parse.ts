/**
 * From a request body to the messages it carries: JSON parsing, the batch envelope, the same
 * validation as the client (`validateMessage`, exact Go v2 messages), the 32,000-byte limit, and
 * the normalisation every accepted message gets (envelope `context` and `integrations` merged
 * under its own, `timestamp` and `messageId` filled in when absent, `receivedAt`).
 *
 * One bad message rejects the whole request (400 naming it, e.g. `batch[3].event`): a batch is
 * accepted or refused as a unit, so a client never has to guess which half arrived.
 */
import { serializeMessage } from '../../message/serialize.js'
import { MESSAGE_TYPES, type MessageType } from '../../message/types.js'
import { describe, isPlainObject, validateMessage } from '../../message/validate.js'
import { randomUUID } from '../../platform/runtime.js'
import { badRequest, fromMessageError } from '../http/errors.js'
import { assign, mergeUnder } from '../../message/merge.js'

export type Message = Record<string, unknown> & { type: MessageType }

/** What a request body is: a batch, or one call of a type given by the path. */
export type BodyKind = 'batch' | MessageType

export function parseJson(text: string): unknown {
  if (text.trim() === '') throw badRequest('INVALID_JSON', 'Request body is empty; expected JSON.', 'body')
  try {
    return JSON.parse(text)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw badRequest('INVALID_JSON', `Request body is not valid JSON: ${reason}`, 'body')
  }
}

interface Envelope {
  context: Record<string, unknown> | undefined
  integrations: Record<string, unknown> | undefined
  sentAt: string | undefined
  receivedAt: string
}

function envelopeObject(body: Record<string, unknown>, field: 'context' | 'integrations') {
  const value = body[field]
  if (value === undefined) return undefined
  if (!isPlainObject(value)) {
    throw badRequest('VALIDATION', `Expected \`${field}\` to be an object, got ${describe(value)}.`, field)
  }
  return value
}

/** The messages of a request body, validated and normalised; throws a 400 naming the first problem. */
export function extractMessages(kind: BodyKind, body: unknown, receivedAt: string): Message[] {
  if (!isPlainObject(body)) {
    const expected = kind === 'batch' ? 'a JSON object { batch: [...] }' : `a JSON object (the ${kind} message)`
    throw badRequest('VALIDATION', `Expected the request body to be ${expected}, got ${describe(body)}.`, 'body')
  }
  const sentAt = typeof body.sentAt === 'string' ? body.sentAt : undefined
  if (kind !== 'batch') {
    const envelope: Envelope = { context: undefined, integrations: undefined, sentAt, receivedAt }
    return [normalise(body, kind, envelope, '')]
  }
  const { batch } = body
  if (!Array.isArray(batch)) {
    throw badRequest('VALIDATION', `Expected \`batch\` to be an array of messages, got ${describe(batch)}.`, 'batch')
  }
  const envelope: Envelope = {
    context: envelopeObject(body, 'context'),
    integrations: envelopeObject(body, 'integrations'),
    sentAt,
    receivedAt,
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
  // part of the message, never forwarded. A plain loop: object rest/spread is slower on this path.
  const message: Record<string, unknown> = {}
  for (const key in entry) if (key !== 'writeKey') assign(message, key, entry[key])
  message.type = type
  if (envelope.context !== undefined) {
    message.context = mergeUnder(envelope.context, entry.context as Record<string, unknown> | undefined)
  }
  if (envelope.integrations !== undefined) {
    message.integrations = mergeUnder(envelope.integrations, entry.integrations as Record<string, unknown> | undefined)
  }
  try {
    validateMessage(type, message)
    serializeMessage(message)
    // Validation and the size limit apply to what the caller sent; then the server's own fields.
    if (message.timestamp === undefined) message.timestamp = envelope.receivedAt
    if (message.messageId === undefined) message.messageId = randomUUID()
    if (message.sentAt === undefined && envelope.sentAt !== undefined) message.sentAt = envelope.sentAt
    message.receivedAt = envelope.receivedAt
  } catch (error) {
    throw fromMessageError(error, at) ?? error
  }
  return message as Message
}
