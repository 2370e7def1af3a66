/**
 * Turns a call's input into the message that will be sent, without touching the caller's object:
 * validated, stamped (`type`, `messageId`, `timestamp`), defaults merged under its own `context`
 * and `integrations`, and serialised once.
 */
import { mergeUnder } from '../message/merge.js'
import { isDate, isPlainObject, nameProblem } from '../message/validate.js'
import { serializeMessage } from '../message/serialize.js'
import type { Integrations, JsonObject, MessageType, SentMessage } from '../message/types.js'
import { quickCheck, randomUUID } from '#platform'
import type { BuiltMessage, KeepParts } from '../queue/message-queue.js'
import { stamp, stampedText } from '../message/wire.js'

export interface MessageDefaults {
  context: JsonObject | undefined
  integrations: Integrations | undefined
  /** A `page()`'s properties where the caller left them out (option `browserContext`). */
  page?: JsonObject
}


/** `new Date().toISOString()`, formatted at most once per millisecond. */
let lastMs = NaN
let lastIso = ''
function nowIso(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    lastIso = new Date(ms).toISOString()
  }
  return lastIso
}


/** `keepParts`: the queue's, when it takes a message's text as parts (see `BuiltMessage`). */
export function buildMessage(type: MessageType, input: unknown, defaults: MessageDefaults, keepParts?: KeepParts): BuiltMessage {
  // The platform's quick yes, else every check by name (the browser's: always the latter).
  if (!(isPlainObject(input) && quickCheck(type, input))) nameProblem(type, input)
  // The rest object is a fresh copy of the caller's fields: completing it never touches the input.
  const { timestamp, messageId, context, integrations, traits, ...message } = input as Record<string, unknown>
  // Go v2 sent a Page's `Traits` as `properties`.
  if (type === 'page' && traits !== undefined) message.properties = message.properties === undefined ? traits : { ...(traits as JsonObject), ...(message.properties as JsonObject) }
  // The page's own properties, under the caller's (a `properties` that is not an object is the caller's to answer for).
  if (defaults.page && (message.properties === undefined || isPlainObject(message.properties))) message.properties = { ...defaults.page, ...(message.properties as JsonObject) }
  // The client's defaults under the call's own (no merge at all where the client has none).
  const mergedIntegrations = (defaults.integrations ? mergeUnder(defaults.integrations, integrations as Integrations | undefined) : integrations) as Integrations | undefined
  const merged = defaults.context ? mergeUnder(defaults.context, context as JsonObject | undefined) : (context as JsonObject | undefined)
  // The common message (no traits, integrations, context, messageId or other stamped field of its
  // own: see `stamp` below; no `toJSON`): only the caller's fields go through JSON.stringify, and
  // the fields stamped below are written after them as text (../message/wire.ts), which costs a
  // fraction of serialising them (a JSON.stringify call alone costs more than that text). A bigint
  // or a cycle leaves it to serializeMessage.
  let own: string | undefined
  if (traits === undefined && !mergedIntegrations && !merged && messageId === undefined && message.toJSON === undefined) {
    try {
      own = JSON.stringify(message)
    } catch {
      // serializeMessage names the field, or writes the bigint.
    }
  }
  if (traits !== undefined && type !== 'page') message.traits = traits
  if (mergedIntegrations) message.integrations = mergedIntegrations
  const id = (messageId as string | undefined) ?? randomUUID()
  // A timestamp string passed ISO_8601 (digits, `T`, `:`, `.`, `+`, `-`, `Z`): nothing to escape.
  const at = isDate(timestamp) ? timestamp.toISOString() : ((timestamp as string | undefined) ?? nowIso())
  // `context`: a new object either way, the library over the merged one (the caller's is never
  // written to). A stamped field of the caller's own (`type`) is replaced: its text is not used.
  if (stamp(message, type, id, at, merged)) own = undefined
  // Where the arena will hold it, the parts are checked apart and kept, and it writes each
  // (../queue/byte-store.ts): no text of the whole is made, a third less to allocate.
  if (keepParts && own) return keepParts(message, own, type, id, at)
  // Elsewhere checking it as a whole also makes it one flat string: joined parts would be many
  // objects for the garbage collector to move while the message waits in the queue.
  return { message: message as unknown as SentMessage, ...serializeMessage(message, undefined, own && `${own.length > 2 ? own.slice(0, -1) + ',' : '{'}${stampedText(type, id, at)}`) }
}
