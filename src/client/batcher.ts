/**
 * Packs queued messages into batches that respect both limits (`flushAt` messages, 500,000 bytes
 * per request body), and assembles a batch's body from the messages' JSON text without serialising
 * them again: as text, or packed once as UTF-8 bytes into a buffer of its exact size.
 */
import { MAX_BATCH_BYTES, utf8Length } from '../limits.js'
import type { QueuedMessage } from './build-message.js'
import { LIBRARY } from './build-message.js'

const ENVELOPE_CONTEXT = JSON.stringify({ library: LIBRARY })
/** Same length as any `Date#toISOString()` of years 0–9999. */
const SENT_AT_PLACEHOLDER = '2000-01-01T00:00:00.000Z'

/**
 * Builds request bodies for one write key; `plainText` adds `writeKey` (the CORS-free form).
 * With `bytes` (server runtimes: `bytesBodies`, src/platform/runtime.ts) a body is UTF-8 bytes.
 */
export class BodyBuilder {
  readonly #tail: (sentAt: string) => string
  readonly #bytes: boolean
  /** Bytes of the envelope around the messages. */
  readonly overhead: number

  constructor(writeKey: string, plainText: boolean, bytes = false) {
    this.#bytes = bytes
    const key = plainText ? `,"writeKey":${JSON.stringify(writeKey)}` : ''
    this.#tail = (sentAt) => `],"sentAt":"${sentAt}","context":${ENVELOPE_CONTEXT}${key}}`
    this.overhead = utf8Length(`{"batch":[${this.#tail(SENT_AT_PLACEHOLDER)}`)
  }

  /** The body: UTF-8 bytes with `bytes`, else text. */
  build(messages: readonly QueuedMessage[], sentAt: string): string | Uint8Array<ArrayBuffer> {
    if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__) && this.#bytes) return writeBody(messages, this.#tail(sentAt), this.size(messages))
    let body = '{"batch":['
    for (let i = 0; i < messages.length; i++) body += (i === 0 ? '' : ',') + messages[i].json
    return body + this.#tail(sentAt)
  }

  /** The body's exact UTF-8 size, without building it. */
  size(messages: readonly QueuedMessage[]): number {
    let bytes = this.overhead + Math.max(0, messages.length - 1)
    for (const m of messages) bytes += m.bytes
    return bytes
  }
}

/**
 * The same body written once into a buffer of its exact size, `bytes` (each message's `bytes` is
 * its exact UTF-8 length), without joining the texts first.
 */
function writeBody(messages: readonly QueuedMessage[], tail: string, bytes: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(bytes)
  const encoder = new TextEncoder()
  let at = encoder.encodeInto('{"batch":[', out).written
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) out[at++] = 0x2c // ,
    at += encoder.encodeInto(messages[i].json, out.subarray(at)).written
  }
  encoder.encodeInto(tail, out.subarray(at))
  return out
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
  let bytes = overhead
  for (const item of messages) {
    const added = item.bytes + (current.length === 0 ? 0 : 1)
    if (current.length > 0 && (current.length >= maxCount || bytes + added > maxBodyBytes)) {
      batches.push(current)
      current = []
      bytes = overhead
    }
    bytes += item.bytes + (current.length === 0 ? 0 : 1)
    current.push(item)
  }
  if (current.length > 0) batches.push(current)
  return batches
}
