/**
 * The wire format, defined once: the fields stamped on every message after the caller's own
 * (`STAMPED`) and the batch envelope around a batch's messages (`ENVELOPE`). Every form derives
 * from those two lists:
 * - the object a call returns (`stamp`);
 * - the text: each definition's JSON text cut at its markers (`template`), the values written
 *   between the parts: a message's stamped fields after its own JSON (`stampedText`), a request
 *   body (`BodyBuilder#build`);
 * - the bytes: the Node byte store (../queue/byte-store.ts) copies the same parts as bytes.
 * Adding a stamped field (or an envelope field) is one line in its definition.
 */
import { MAX_BATCH_BYTES } from '../limits.js'
import type { LibraryInfo, MessageType } from './types.js'

export const LIBRARY: LibraryInfo = Object.freeze({ name: 'isomorphic-analytics', version: __VERSION__ })

/**
 * Markers: where a value goes in a definition below (`MESSAGES`: inside the batch's array). Each
 * is a control character, which JSON.stringify writes as its escape (`\u0001`…), so the text of a
 * definition is cut at them (`template`); nothing else in a definition is such text (the write key,
 * the caller's, is added outside: see `BodyBuilder`).
 */
const [MESSAGE_ID, TIMESTAMP, SENT_AT, MESSAGES] = '\x01\x02\x03\x04'

/**
 * The fields stamped on a message of `type`, after the caller's own: the definition, called with
 * a message's values (`stamp`) or with markers (its text). `context`: the library over the
 * message's own (the caller's, with the defaults; a new object either way).
 */
const STAMPED = (type: MessageType, messageId: string, timestamp: string, context?: object) => ({
  type,
  context: { ...context, library: LIBRARY },
  messageId,
  timestamp,
})

/** The batch envelope (with option `plainText`, the write key follows: see `BodyBuilder`). */
const ENVELOPE = { batch: [MESSAGES], sentAt: SENT_AT, context: { library: LIBRARY } }

/**
 * A definition's JSON text, cut at its markers: constant parts at the even places, and between
 * each two the marker's number as text (`'1'` a message's id, `'2'` its timestamp, `'3'` a
 * body's `sentAt`), or `undefined` for a body's messages (written between `[` and `]`).
 */
export type Template = ReadonlyArray<string | undefined>

/** `fields`' JSON text from `from` (1: without the opening brace), cut at its markers. */
const template = (fields: object, from?: number): Template => JSON.stringify(fields).slice(from).split(/\\u000([1-3])|"\\u0004"/)

/** A template's text, each marker replaced by `values[its number]` (the messages: `values[0]`; none: empty). */
const fill = (parts: Template, values: ReadonlyArray<string | undefined>): string => parts.map((part, i) => (i & 1 ? values[+(part ?? 0)] : part)).join('')

/** Per type: the stamped fields' text after the caller's fields (`{…,` or `{`), without the opening brace. */
const stamps: Partial<Record<MessageType, Template>> = {}

/** The stamped text of a message of `type`: its constant parts, and the markers of its id and timestamp. */
export const stampTemplate = (type: MessageType): Template => (stamps[type] ??= template(STAMPED(type, MESSAGE_ID, TIMESTAMP), 1))

/**
 * Stamps `message` (a fresh object, the caller's fields) with the stamped fields, in order;
 * `context` is the message's own (merged with the defaults). Whether the caller's fields had a
 * stamped one (their own text then cannot come first: see `stampedText`).
 */
export function stamp(message: Record<string, unknown>, type: MessageType, id: string, at: string, context?: object): boolean {
  const fields = STAMPED(type, id, at, context)
  let had = false
  for (const name in fields) had ||= name in message
  Object.assign(message, fields)
  return had
}

/**
 * The stamped text, written after the caller's fields as JSON (`{…,` or `{`): the stamped fields
 * and the closing `}`. `id` and `at` are ASCII with nothing to escape (a generated UUID, a
 * timestamp that passed ISO_8601).
 */
export const stampedText = (type: MessageType, id: string, at: string): string => fill(stampTemplate(type), [, id, at])

/** A message's stamped values, kept apart from its object (the byte store writes them: ../queue/byte-store.ts). */
export interface Stamp {
  type: MessageType
  id: string
  at: string
  /** The stamped text's length in bytes (`stampedLength`), counted once. */
  bytes: number
}

/** A stamp's value for a marker of its template. */
export const stampValue = (marker: string | undefined, { id, at }: Stamp): string => (marker === '1' ? id : at)

const constantLengths: Partial<Record<MessageType, number>> = {}

/** The stamped text's length in bytes (ASCII: one byte a character). */
export const stampedLength = (type: MessageType, id: string, at: string): number =>
  (constantLengths[type] ??= fill(stampTemplate(type), []).length) + id.length + at.length

/** Builds request bodies for one write key; `plainText` adds `writeKey` (the CORS-free form). */
export class BodyBuilder {
  /** The envelope: its constant parts, and the markers of its messages and `sentAt`. */
  readonly template: Template
  /** Bytes of the envelope around the messages. */
  readonly overhead: number

  /** `utf8ByteLength`: the platform's exact UTF-8 length. */
  constructor(writeKey: string, plainText: boolean, utf8ByteLength: (text: string) => number) {
    const parts = template(ENVELOPE) as string[]
    if (plainText) parts.push(`${parts.pop()!.slice(0, -1)},"writeKey":${JSON.stringify(writeKey)}}`)
    this.template = parts
    // (`sentAt`: 24 bytes, as any `Date#toISOString()` of the years 0–9999.)
    this.overhead = utf8ByteLength(fill(parts, [])) + 24
  }

  /** The body's JSON text. */
  build(messages: readonly { readonly json: string }[], sentAt: string): string {
    return fill(this.template, [messages.map((m) => m.json).join(), , , sentAt])
  }

  /** The body's exact UTF-8 size, without building it. */
  size(messages: readonly { readonly bytes: number }[]): number {
    let bytes = this.overhead + Math.max(0, messages.length - 1)
    for (const m of messages) bytes += m.bytes
    return bytes
  }
}

/**
 * Splits `messages` in order into runs of at most `maxCount` messages whose bodies (`overhead`,
 * the envelope's bytes, plus each message's `bytes` and a comma between two) are at most
 * `maxBodyBytes`: how every queue cuts the messages it gives up into batches.
 */
export function cut<T extends { readonly bytes: number }>(messages: readonly T[], maxCount: number, overhead: number, maxBodyBytes: number = MAX_BATCH_BYTES): T[][] {
  const batches: T[][] = []
  let current: T[] = []
  // Its messages' bytes and the comma after each: one more makes a body of `overhead + bytes + its bytes`.
  let bytes = 0
  for (const item of messages) {
    if (current.length && (current.length >= maxCount || overhead + bytes + item.bytes > maxBodyBytes)) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += item.bytes + 1
  }
  if (current.length) batches.push(current)
  return batches
}
