/**
 * Turns a call's input into the message that will be sent, without touching the caller's object:
 * validated, stamped (`type`, `messageId`, `timestamp`), defaults merged under its own `context`
 * and `integrations`, and serialised once.
 */
import { mergeUnder } from '../message/merge.js'
import { isDate, validateMessage } from '../message/validate.js'
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

/** `new Date().toISOString()`, formatted at most once per millisecond. */
let lastMs = Number.NaN
let lastIso = ''
function nowIso(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}

export function buildMessage(type: MessageType, input: unknown, defaults: MessageDefaults): QueuedMessage {
  validateMessage(type, input)
  // The rest object is a fresh copy of the caller's fields: completing it never touches the input.
  const { timestamp, messageId, context, integrations, traits, ...message } = input as Record<string, unknown>
  message.type = type
  if (type === 'page') {
    // Go v2 sent a Page's `Traits` as `properties`.
    if (traits !== undefined) message.properties = message.properties === undefined ? traits : { ...(traits as JsonObject), ...(message.properties as JsonObject) }
  } else if (traits !== undefined) {
    message.traits = traits
  }
  const mergedIntegrations = mergeUnder(defaults.integrations, integrations as Integrations | undefined) as Integrations | undefined
  if (mergedIntegrations) message.integrations = mergedIntegrations
  // A new object either way: the caller's `context` is never written to.
  const merged = mergeUnder(defaults.context, context as JsonObject | undefined)
  message.context = merged === undefined ? { library: LIBRARY } : { ...merged, library: LIBRARY }
  message.messageId = (messageId as string | undefined) ?? randomUUID()
  message.timestamp = isDate(timestamp) ? timestamp.toISOString() : ((timestamp as string | undefined) ?? nowIso())
  const { json, bytes } = serializeMessage(message)
  return { message: message as unknown as SentMessage, json, bytes }
}
