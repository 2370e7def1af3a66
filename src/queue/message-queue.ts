/**
 * The client's queue seam: where built messages wait for their batch, and the batches that carry
 * them to delivery. One implementation per way of holding messages, chosen once when the client is
 * made (by its platform's `createQueue`, ../platform/), never checked again:
 * - ./text-queue.ts: the messages' JSON text as strings (browsers, workers, a `fetch` of one's own);
 * - ./persisted-queue.ts: the same, mirrored into the page's `localStorage` (option `persist`);
 * - ./byte-store.ts: UTF-8 bytes in reused slabs outside the JavaScript heap (Node's transport).
 * test/queue/contract.test.ts runs the same suite against each.
 */
import type { MessageType, SentMessage } from '../message/types.js'
import type { Stamp } from '../message/wire.js'
import type { Transport } from '../transport/types.js'

/** What a platform chooses a client's queue by (../platform/platform.ts `createQueue`). */
export interface QueueChoice {
  readonly writeKey: string
  readonly plainText: boolean
  readonly persist: boolean
  readonly transport: Transport
}

/**
 * A built message: the object the call returns, its JSON text and that text's UTF-8 length. Built
 * for a queue that keeps parts (`buildMessage`'s (../client/build-message.ts) `keepParts`: the
 * byte store), the common message keeps its text as parts instead, which the byte store writes
 * one after the other (./byte-store.ts `writeMessage`): the caller's fields as JSON, then the
 * stamped ones from their values (`"type":…,"timestamp":"…"}`). `json` is then empty: neither the
 * whole text nor the stamped fields' text is ever made as a string.
 */
export interface BuiltMessage {
  message: SentMessage
  /** The text (built as parts: empty). */
  json: string
  bytes: number
  /** Parts: the caller's fields as JSON (an object's text, `}` included). */
  ownJson?: string
  /**
   * Parts: the stamped fields' values (ASCII), kept apart from `message`, which the caller may
   * change before the arena writes them (a message waiting for an async schema verdict).
   */
  stamp?: Stamp
}

/**
 * How a queue that copies a message's text from its parts (the byte store: ./byte-store.ts)
 * keeps the message `buildMessage` completed: `ownJson`, the caller's fields as JSON, and the
 * stamped fields' values.
 */
export type KeepParts = (message: Record<string, unknown>, ownJson: string, type: MessageType, id: string, at: string) => BuiltMessage

export interface MessageQueue {
  /** Messages held and not taken yet. */
  readonly length: number
  /**
   * Where the queue copies a message's text from its parts (`BuiltMessage#ownJson` and `#stamp`),
   * how it keeps them: `buildMessage` then never joins them into one string.
   */
  readonly keepParts?: KeepParts
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
