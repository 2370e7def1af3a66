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

/** The stamped text, where it is made as a string (the arena writes it from `stampParts`). */
export const stampedText = (type: MessageType, id: string, at: string): string =>
  `"type":"${type}","context":${LIBRARY_CONTEXT},"messageId":"${id}","timestamp":"${at}"}`

const parts: Partial<Record<MessageType, readonly string[]>> = {}

/**
 * The stamped text's constant parts for a message of `type`, cut from `stampedText`: before the
 * messageId's value, between it and the timestamp's, and after that.
 */
export const stampParts = (type: MessageType): readonly string[] => (parts[type] ??= stampedText(type, '\0', '\0').split('\0'))

const constantLengths: Partial<Record<MessageType, number>> = {}

/** The stamped text's length in bytes (ASCII: one byte a character). */
export const stampedLength = (type: MessageType, id: string, at: string): number =>
  (constantLengths[type] ??= stampParts(type).join('').length) + id.length + at.length
