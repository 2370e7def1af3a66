/**
 * Turns a call's input into the message that will be sent, without touching the caller's object:
 * validated, stamped (`type`, `messageId`, `timestamp`), defaults merged under its own `context`
 * and `integrations`, and serialised once.
 */
import { mergeUnder } from '../message/merge.js'
import { validateMessage } from '../message/validate.js'
import { serializeMessage } from '../message/serialize.js'
import type { Integrations, JsonObject, LibraryInfo, MessageType, SentMessage } from '../message/types.js'
import { randomUUID } from '../platform/runtime.js'

export const LIBRARY: LibraryInfo = Object.freeze({ name: 'isomorphic-analytics', version: __VERSION__ })

export interface MessageDefaults {
  context: JsonObject | undefined
  integrations: Integrations | undefined
}

/** A message ready to queue: the object, its JSON, and the JSON's UTF-8 byte length. */
export interface QueuedMessage {
  message: SentMessage
  json: string
  bytes: number
}

export function buildMessage(type: MessageType, input: unknown, defaults: MessageDefaults): QueuedMessage {
  validateMessage(type, input)
  const { timestamp, messageId, context, integrations, traits, ...fields } = input as Record<string, unknown>
  const message: Record<string, unknown> = { ...fields, type }
  if (type === 'page') {
    // Go v2 sent a Page's `Traits` as `properties`.
    if (traits !== undefined) message.properties = fields.properties === undefined ? traits : { ...(traits as JsonObject), ...(fields.properties as JsonObject) }
  } else if (traits !== undefined) {
    message.traits = traits
  }
  const mergedIntegrations = mergeUnder(defaults.integrations, integrations as Integrations | undefined) as Integrations | undefined
  if (mergedIntegrations) message.integrations = mergedIntegrations
  // A new object either way: the caller's `context` is never written to.
  message.context = { ...mergeUnder(defaults.context, context as JsonObject | undefined), library: LIBRARY }
  message.messageId = (messageId as string | undefined) ?? randomUUID()
  message.timestamp = timestamp instanceof Date ? timestamp.toISOString() : ((timestamp as string | undefined) ?? new Date().toISOString())
  const { json, bytes } = serializeMessage(message)
  return { message: message as unknown as SentMessage, json, bytes }
}
