/**
 * Packs queued messages into batches that respect both limits (`flushAt` messages, 500,000 bytes
 * per request body), and assembles a batch's body from the messages' JSON text, once, when the
 * batch is cut, without serialising them again. On Node with the Node transport the messages and
 * the body are UTF-8 bytes instead, outside the JavaScript heap (../platform/arena.ts, which uses
 * this envelope).
 */
import { MAX_BATCH_BYTES } from '../limits.js'
import { utf8ByteLength } from '../platform/runtime.js'
import type { QueuedMessage, TextMessage } from './build-message.js'
import { LIBRARY_CONTEXT } from './stamp.js'

/** A `sentAt` of the same length as any `Date#toISOString()` of years 0–9999 (1970's first instant). */
const SENT_AT_PLACEHOLDER = new Date(0).toISOString()

/** Builds request bodies for one write key; `plainText` adds `writeKey` (the CORS-free form). */
export class BodyBuilder {
  /** The body around `batch`, its messages' JSON joined by commas. */
  readonly #body: (batch: string, sentAt: string) => string
  /** Bytes of the envelope around the messages. */
  readonly overhead: number

  constructor(writeKey: string, plainText: boolean) {
    const key = plainText ? `,"writeKey":${JSON.stringify(writeKey)}` : ''
    this.#body = (batch, sentAt) => `{"batch":[${batch}],"sentAt":"${sentAt}","context":${LIBRARY_CONTEXT}${key}}`
    this.overhead = utf8ByteLength(this.#body('', SENT_AT_PLACEHOLDER))
  }

  /** The body's JSON text. */
  build(messages: readonly QueuedMessage[], sentAt: string): string {
    // (Strings: messages are held as bytes only where bodies are made of bytes, see ../platform/arena.ts.)
    return this.#body(messages.map((m) => (m as TextMessage).json).join(), sentAt)
  }

  /** The body's exact UTF-8 size, without building it. */
  size(messages: readonly QueuedMessage[]): number {
    let bytes = this.overhead + Math.max(0, messages.length - 1)
    for (const m of messages) bytes += m.bytes
    return bytes
  }
}

/** Splits `messages` in order into batches of at most `maxCount` messages and `maxBodyBytes` bytes. */
export function splitIntoBatches(
  messages: readonly QueuedMessage[],
  maxCount: number,
  overhead: number,
  maxBodyBytes: number = MAX_BATCH_BYTES,
): QueuedMessage[][] {
  const batches: QueuedMessage[][] = []
  let current: QueuedMessage[] = []
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
