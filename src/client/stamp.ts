/**
 * The fields stamped on every message after the caller's own: `type`, `context` (the library,
 * when the message has no context of its own), `messageId` and `timestamp`, in that order, as
 * JSON text: `"type":"track","context":{"library":…},"messageId":"…","timestamp":"…"}`.
 */
import type { LibraryInfo, MessageType } from '../message/types.js'

export const LIBRARY: LibraryInfo = Object.freeze({ name: 'isomorphic-analytics', version: __VERSION__ })

/**
 * `context` of a message with none of its own and no default, and of every batch: the library
 * only, as JSON.
 */
export const LIBRARY_CONTEXT = JSON.stringify({ library: LIBRARY })

/** The stamped fields' values: ASCII (a generated UUID; a timestamp that passed ISO_8601). */
export interface Stamp {
  type: MessageType
  id: string
  at: string
  /** The stamped text's length in bytes (`stampedLength`), counted once. */
  bytes: number
}

/** The stamped text up to the messageId's value, for a message of `type`. */
export const stampHead = (type: MessageType): string => `"type":"${type}","context":${LIBRARY_CONTEXT},"messageId":"`

/** Between the messageId's value and the timestamp's. */
export const STAMP_MIDDLE = '","timestamp":"'

/** After the timestamp's value, closing the message. */
export const STAMP_END = '"}'

const headLengths: Partial<Record<MessageType, number>> = {}

/** The stamped text's length in bytes (ASCII: one byte a character). */
export const stampedLength = (type: MessageType, id: string, at: string): number =>
  (headLengths[type] ??= stampHead(type).length) + id.length + STAMP_MIDDLE.length + at.length + STAMP_END.length
