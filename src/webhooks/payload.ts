/**
 * The forwarded JSON payload (seed §2.3 and §6) and the mapping from a collected message to it.
 * `WebhookPayload` is a discriminated union: receivers narrow it on `type`.
 */
import { ValidationError } from '../errors.js'
import type { JsonObject, MessageType } from '../message/types.js'
import { serializeMessage } from '../message/serialize.js'
import { describe, isPlainObject, isValidTimestamp, timestampMs, validateMessage } from '../message/validate.js'
import { randomUUID } from '#platform'
import { assign } from '../message/merge.js'

/** Members every payload but delete carries. */
interface Envelope {
  /** The payload format's version: always 1. */
  version: 1
  /** ISO 8601, millisecond precision, UTC: `2026-11-22T10:00:00.000Z`. */
  timestamp: string
  /** Device, IP address and the like, as the source sent it (`{}` when it sent none). */
  context: JsonObject
  /** Passed through from the collected message, so receivers can de-duplicate. */
  messageId?: string
  /** The anonymous id, when the message had one. */
  anonymousId?: string
  /** When the collector received the message (ISO 8601, the collector's clock). */
  receivedAt?: string
  /** The members the sender sent are all forwarded (`writeKey` never): these and any other. */
  sentAt?: string
  originalTimestamp?: string
  channel?: string
  integrations?: JsonObject
}

/** The payload forwarded for a page view. */
export interface PageWebhookPayload extends Envelope {
  type: 'page'
  /** The user's id, when the message had one. */
  userId?: string
  /** The page's name, when given. */
  name?: string
  /** The page's category, when given. */
  category?: string
  /** path, referrer, title, url, and any further keys. */
  properties: JsonObject
}

/** The payload forwarded for a screen view. */
export interface ScreenWebhookPayload extends Envelope {
  type: 'screen'
  /** The user's id, when the message had one. */
  userId?: string
  /** The screen's name, when given. */
  name?: string
  /** The screen's category, when given. */
  category?: string
  /** The screen's properties (`{}` when none were sent). */
  properties: JsonObject
}

/** The payload forwarded for an identify; {@link audienceSync} makes these for membership changes. */
export interface IdentifyWebhookPayload extends Envelope {
  type: 'identify'
  /** The user's id, when the message had one. */
  userId?: string
  /** The user's traits: the message's `traits`, else its `context.traits` (`{}` when neither). */
  traits: JsonObject
}

/** The payload forwarded for a track. */
export interface TrackWebhookPayload extends Envelope {
  type: 'track'
  /** The user's id, when the message had one. */
  userId?: string
  /** The event's name. */
  event: string
  /** The event's properties (`{}` when none were sent). */
  properties: JsonObject
}

/** The payload forwarded for an alias: the ids under their own keys and under the original destination's. */
export interface AliasWebhookPayload extends Envelope {
  type: 'alias'
  /** What the original service really sent. */
  previousId: string
  /** The id the user is known by now. */
  userId: string
  /** The same two ids under the keys the original Webhooks destination's documented payload uses. */
  'Previous ID': string
  'User ID': string
}

/** The payload forwarded for a group. */
export interface GroupWebhookPayload extends Envelope {
  type: 'group'
  /** The user's id, when the message had one. */
  userId?: string
  /** The group's id. */
  groupId: string
  /** Keys untouched (they may contain spaces). */
  traits: JsonObject
}

/** A deletion notification: only these three members, no `version`. */
export interface DeleteWebhookPayload {
  type: 'delete'
  /** The user whose data to delete. */
  userId: string
  /** When the deletion was requested: ISO 8601, millisecond precision, UTC. */
  timestamp: string
}

/**
 * Any forwarded payload: the JSON body a webhook URL receives (and `onEvent` of
 * {@link createWebhookHandler} is given). A union discriminated by `type`: narrow on it.
 */
export type WebhookPayload =
  | PageWebhookPayload
  | ScreenWebhookPayload
  | IdentifyWebhookPayload
  | TrackWebhookPayload
  | AliasWebhookPayload
  | GroupWebhookPayload
  | DeleteWebhookPayload

/** The `type` of a payload: one of the six message types, or `'delete'`. */
export type WebhookEventType = WebhookPayload['type']

/** The payload type for one event type: `WebhookPayloadOf<'track'>` is `TrackWebhookPayload`. */
export type WebhookPayloadOf<T extends WebhookEventType> = Extract<WebhookPayload, { type: T }>

/** Every {@link WebhookEventType}: the `type`s a receiver accepts. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'page',
  'screen',
  'identify',
  'track',
  'alias',
  'group',
  'delete',
]

/** A message as the collector received it (or as the client sends it). Every other member is forwarded as is, but `writeKey`. */
export interface CollectedMessage {
  type: MessageType
  userId?: string
  anonymousId?: string
  messageId?: string
  timestamp?: Date | string
  context?: JsonObject
  event?: string
  name?: string
  category?: string
  properties?: JsonObject
  /** identify and group traits; on page, Go v2's name for `properties`. */
  traits?: JsonObject
  groupId?: string
  previousId?: string
  [member: string]: unknown
}

/** A deletion request for one user. `timestamp` defaults to now. */
export interface DeletionRequest {
  type: 'delete'
  /** The user whose data to delete, a non-empty string. */
  userId: string
  /** When it was requested: a `Date` or an ISO 8601 string. */
  timestamp?: Date | string
}

/** What {@link toWebhookPayload} takes: a collected message or a deletion request. */
export type WebhookInput = CollectedMessage | DeletionRequest

/**
 * `toISOString()`'s own form. Every timestamp reaching `toIso` was validated (a real instant, day
 * within its month), and the pattern rules out hour 24 (which `Date` moves to the next day), so a
 * string of this form is already what the round trip through `Date` would return.
 */
const CANONICAL_ISO = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/

/** A timestamp that passed `isValidTimestamp` as ISO 8601 in UTC with ms (now when absent). */
export const toIso = (value: Date | string | undefined): string =>
  value === undefined
    ? new Date().toISOString()
    : typeof value === 'string' && CANONICAL_ISO.test(value)
      ? value
      : new Date(timestampMs(value)).toISOString()

/**
 * One payload in a stable member order: version, type, ids, the type's own members, timestamp,
 * context, then every other member the sender sent, in its order (`receivedAt`, `channel`,
 * `integrations`, `_metadata`, …), but the write key: a credential, never forwarded. Optional
 * strings are copied only when present; the members above are the payload's, not the sender's.
 */
function build(type: MessageType, message: Record<string, unknown>, members: Record<string, unknown>): WebhookPayload {
  const out: Record<string, unknown> = { version: 1, type }
  if (typeof message.messageId === 'string') out.messageId = message.messageId
  if (typeof message.anonymousId === 'string') out.anonymousId = message.anonymousId
  if (typeof message.userId === 'string') out.userId = message.userId
  for (const key in members) if (members[key] !== undefined) out[key] = members[key]
  out.timestamp = toIso(message.timestamp as Date | string | undefined)
  out.context = (message.context as JsonObject | undefined) ?? {}
  for (const key in message) {
    if (key === 'writeKey' || OWN_MEMBERS.has(key) || Object.hasOwn(out, key)) continue
    const value = message[key]
    if (value !== undefined) assign(out, key, value)
  }
  return out as unknown as WebhookPayload
}

/** Members the payload defines itself (present or not): never copied from the sender as sent. */
const OWN_MEMBERS = new Set(['version', 'type', 'messageId', 'anonymousId', 'userId', 'timestamp', 'context'])

const objectOr = (value: unknown): JsonObject => (value as JsonObject | undefined) ?? {}
const stringOr = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

function deletion(message: Record<string, unknown>): DeleteWebhookPayload {
  if (typeof message.userId !== 'string' || message.userId === '') {
    throw new ValidationError('userId', `Expected \`userId\` of a delete to be a non-empty string, got ${describe(message.userId)}.`)
  }
  if (message.timestamp !== undefined && !isValidTimestamp(message.timestamp)) {
    throw new ValidationError(
      'timestamp',
      `Expected \`timestamp\` to be a valid Date or ISO 8601 string, got ${describe(message.timestamp)}.`,
    )
  }
  return { type: 'delete', userId: message.userId, timestamp: toIso(message.timestamp as Date | string | undefined) }
}

/**
 * Maps a collected message, or a deletion request, to the payload forwarded to webhook URLs.
 * Validates as the collector does and throws `ValidationError` (naming the field) for an unknown
 * `type` or a missing or mistyped member. Does not mutate its argument; `context` and the
 * property/trait objects are passed by reference, not copied.
 */
export function toWebhookPayload<T extends WebhookInput>(message: T): WebhookPayloadOf<T['type']>
export function toWebhookPayload(message: Record<string, unknown>): WebhookPayload
export function toWebhookPayload(input: unknown): WebhookPayload {
  if (!isPlainObject(input)) {
    throw new ValidationError('message', `Expected the message to be an object, got ${describe(input)}.`)
  }
  const type = input.type
  if (typeof type !== 'string' || !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type)) {
    throw new ValidationError(
      'type',
      `Expected \`type\` to be one of ${WEBHOOK_EVENT_TYPES.join(', ')}, got ${describe(type)}.`,
    )
  }
  if (type === 'delete') return deletion(input)
  validateMessage(type as MessageType, input)
  refuseLossyValues(input)
  // A message without an id gets one here, as it gets a timestamp: receivers de-duplicate on it.
  const message = input.messageId === undefined ? { ...input, messageId: randomUUID() } : input
  return payloadOfValidMessage(message as Record<string, unknown> & { type: MessageType })
}

/**
 * Values JSON would change without a word are refused, naming the field, as the client refuses
 * them (a payload is delivered as its JSON): a `Map` or `Set` (→ `{}`), a cycle or too deep a
 * nesting, through the client's own serialiser; and `NaN` or `±Infinity` (→ `null`).
 */
function refuseLossyValues(message: Record<string, unknown>): void {
  const { json } = serializeMessage(message, Number.POSITIVE_INFINITY)
  // A non-finite number always comes out as `null`: only then is the message walked to find one.
  if (json.includes('null')) refuseNonFinite(message, '', new Set())
}

function refuseNonFinite(value: unknown, path: string, seen: Set<object>): void {
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw new ValidationError(path, `Cannot send \`${path}\`: it is ${value}, which JSON would turn into \`null\`. Pass a finite number or null instead.`)
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return
  seen.add(value)
  for (const [key, child] of Object.entries(value)) {
    refuseNonFinite(child, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, seen)
  }
}

/**
 * The payload of a message already validated (the collector validates each message once, at
 * ingest): `toWebhookPayload` without its checks.
 */
export function payloadOfValidMessage(m: Record<string, unknown> & { type: MessageType }): WebhookPayload {
  switch (m.type) {
    case 'page':
      // Go v2 sent Page `Traits` as `properties`; a message may still carry them as `traits`.
      return build('page', m, {
        name: stringOr(m.name),
        category: stringOr(m.category),
        properties: objectOr(m.properties ?? m.traits),
      })
    case 'screen':
      return build('screen', m, { name: stringOr(m.name), category: stringOr(m.category), properties: objectOr(m.properties) })
    case 'identify':
      // RudderStack's JS SDK sends an identify's traits only as `context.traits`.
      return build('identify', m, { traits: objectOr(m.traits ?? (m.context as { traits?: unknown } | undefined)?.traits) })
    case 'track':
      return build('track', m, { event: m.event, properties: objectOr(m.properties) })
    case 'group':
      return build('group', m, { groupId: m.groupId, traits: objectOr(m.traits) })
    case 'alias':
      return build('alias', m, { previousId: m.previousId, 'Previous ID': m.previousId, 'User ID': m.userId })
  }
}
