/**
 * Node only, with the byte store (./byte-queue.ts): a built message kept as its parts, the
 * caller's fields as JSON and the stamped fields' values, which the arena writes one after the
 * other (./arena.ts `writeMessage`): neither the whole text nor the stamped fields' text is ever
 * made as a string (they were a sixth of what a `track()` allocated).
 */
import type { KeepParts } from './message-queue.js'
import { stampedLength, type Stamp } from '../client/stamp.js'
import { MessageTooLargeError } from '../errors.js'
import { MAX_DEPTH, MAX_MESSAGE_BYTES } from '../limits.js'
import { refuseCollections, tooDeep, tooDeepError } from '../message/json-shape.js'
import type { SentMessage } from '../message/types.js'
import { bufferLength } from '../platform/server-runtime.js'

/**
 * The checks of `serializeMessage` for a message whose text is `ownJson` (an object's JSON, the
 * caller's fields) with `stampedBytes` more (fields, ASCII, nested at most 3 deep, no `{}`,
 * closing the object) written after them: on `ownJson` alone, so the whole text is never made.
 * The text's UTF-8 length.
 */
export function checkParts(message: Record<string, unknown>, ownJson: string, stampedBytes: number): number {
  if (tooDeep(ownJson, MAX_DEPTH)) throw tooDeepError(message)
  if (ownJson.includes('{}')) refuseCollections(message, '')
  // `{…}` becomes `{…,` (the same bytes), and `{}` becomes `{`.
  const bytes = (ownJson.length > 2 ? bufferLength(ownJson) : 1) + stampedBytes
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES)
  return bytes
}

/** The message `buildMessage` completed, kept as its parts, checked as `serializeMessage` checks a whole text. */
export const keepParts: KeepParts = (message, ownJson, type, id, at) => {
  const stamp: Stamp = { type, id, at, bytes: stampedLength(type, id, at) }
  return { message: message as unknown as SentMessage, json: '', bytes: checkParts(message, ownJson, stamp.bytes), ownJson, stamp }
}
