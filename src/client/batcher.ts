/**
 * The batch envelope: a batch's request body around its messages' JSON text, assembled from that
 * text without serialising the messages again, and its exact size. The queues' batches make their
 * bodies with it (../queue/); the byte store's arena cuts it once into bytes (../queue/arena.ts).
 */
import { LIBRARY_CONTEXT } from './stamp.js'

/** A `sentAt` of the same length as any `Date#toISOString()` of years 0–9999 (1970's first instant). */
const SENT_AT_PLACEHOLDER = new Date(0).toISOString()

/** Builds request bodies for one write key; `plainText` adds `writeKey` (the CORS-free form). */
export class BodyBuilder {
  /** The body around `batch`, its messages' JSON joined by commas. */
  readonly #body: (batch: string, sentAt: string) => string
  /** Bytes of the envelope around the messages. */
  readonly overhead: number

  /** `utf8ByteLength`: the platform's exact UTF-8 length. */
  constructor(writeKey: string, plainText: boolean, utf8ByteLength: (text: string) => number) {
    const key = plainText ? `,"writeKey":${JSON.stringify(writeKey)}` : ''
    this.#body = (batch, sentAt) => `{"batch":[${batch}],"sentAt":"${sentAt}","context":${LIBRARY_CONTEXT}${key}}`
    this.overhead = utf8ByteLength(this.#body('', SENT_AT_PLACEHOLDER))
  }

  /** The body's JSON text. */
  build(messages: readonly { readonly json: string }[], sentAt: string): string {
    return this.#body(messages.map((m) => m.json).join(), sentAt)
  }

  /** The body's exact UTF-8 size, without building it. */
  size(messages: readonly { readonly bytes: number }[]): number {
    let bytes = this.overhead + Math.max(0, messages.length - 1)
    for (const m of messages) bytes += m.bytes
    return bytes
  }
}
