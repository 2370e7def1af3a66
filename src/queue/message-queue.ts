/**
 * The client's queue seam: where built messages wait for their batch, and the batches that carry
 * them to delivery. One implementation per way of holding messages, chosen once when the client is
 * made (./choose.ts), never checked again:
 * - ./text-queue.ts: the messages' JSON text as strings (browsers, workers, a `fetch` of one's own);
 * - ./persisted-queue.ts: the same, mirrored into the page's `localStorage` (option `persist`);
 * - ./byte-queue.ts: UTF-8 bytes in reused slabs outside the JavaScript heap (Node's transport).
 * test/queue/contract.test.ts runs the same suite against each.
 */
import type { BuiltMessage } from '../client/build-message.js'
import type { SentMessage } from '../message/types.js'

export interface MessageQueue {
  /** Messages held and not taken yet. */
  readonly length: number
  /**
   * Whether the queue copies a message's text from its parts (`BuiltMessage#ownJson` and
   * `#stamp`): `buildMessage` then never joins them into one string.
   */
  readonly takesParts: boolean
  /** Holds `built` (its text; the object is the caller's) last. */
  hold(built: BuiltMessage): void
  /**
   * Takes the first `count` messages, in order, as batches of at most `maxCount` messages whose
   * bodies are at most `maxBodyBytes` bytes (a message alone over it is a batch of its own).
   */
  take(count: number, maxCount: number, maxBodyBytes?: number): QueueBatch[]
  /** The page is hidden or going away (a persisted queue stores what it holds now). */
  hide(): void
  /** The texts of the messages held, in order (read back where they are bytes: for the spill at exit). */
  texts(): string[]
}

export interface QueueBatch {
  readonly length: number
  /** Its request body's exact UTF-8 size, without making the body. */
  readonly size: number
  /**
   * Its request body: the batch envelope around its messages' JSON, with `sentAt` the time of the
   * first call. Made once: every later call (a retry) gives the same body.
   */
  body(): string | Uint8Array<ArrayBuffer>
  /** Its messages' JSON text, in order (read back from bytes where they are held so). */
  texts(): string[]
  /**
   * Its first and second halves, as batches of their own (a 413): from then on the halves own the
   * messages, and this batch's `release` frees its body only.
   */
  halves(): [QueueBatch, QueueBatch]
  /**
   * No attempt will send it again (delivered, failed for good, or split): its body and messages
   * are freed (once `written` settles, if given: the transport was still writing the body). A
   * second call does nothing.
   */
  release(written?: Promise<unknown>): void
}

/** The messages of a batch, parsed (for the events and errors that carry them). */
export const parsedMessages = (texts: readonly string[]): SentMessage[] => texts.map((json) => JSON.parse(json) as SentMessage)
