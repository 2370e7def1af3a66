/**
 * Node only (not in the browser build): the queue of a client with the Node transport, whose
 * messages the arena holds (./arena.ts) as UTF-8 bytes, and whose batches' bodies are made there.
 * A queued message is numbers only (where in which slab, how long, ASCII or not) in typed arrays, plus its slab in a plain array: no object of its own until its batch is cut
 * (`take`, in the dispatch task, never on the caller's stack).
 *
 * Why: an object per queued message survives each young-generation collection while it waits, is
 * copied by each, and that survival makes V8 grow the young generation (new pages, each a page
 * fault). The heap kept per queued message after a full collection is a few bytes with this
 * queue, against about a hundred with an object and a string per message; with the parts and the
 * arena's direct writes (./arena.ts `write`), bench/peers.mjs `--part track` and `--part e2e`
 * showed it in interleaved runs against the build before.
 */
import { MessageTooLargeError } from '../errors.js'
import { MAX_DEPTH, MAX_MESSAGE_BYTES } from '../limits.js'
import { refuseCollections, tooDeep, tooDeepError } from '../message/json-shape.js'
import type { SentMessage } from '../message/types.js'
import { cut, stampedLength, type BodyBuilder, type Stamp } from '../message/wire.js'
import { currentSlab, heldBody, heldText, isAscii, release, writeMessage, type Held, type Slab } from './arena.js'
import type { BuiltMessage, KeepParts, MessageQueue, QueueBatch } from './message-queue.js'

const FIRST_CAPACITY = 1024

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
  const bytes = (ownJson.length > 2 ? Buffer.byteLength(ownJson) : 1) + stampedBytes
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES)
  return bytes
}

/**
 * How the byte store keeps the message `buildMessage` completed: as its parts, the caller's
 * fields as JSON and the stamped fields' values, which the arena writes one after the other
 * (./arena.ts `writeMessage`): neither the whole text nor the stamped fields' text is ever made
 * as a string (they were a sixth of what a `track()` allocated). Checked as `serializeMessage`
 * checks a whole text.
 */
export const keepParts: KeepParts = (message, ownJson, type, id, at) => {
  const stamp: Stamp = { type, id, at, bytes: stampedLength(type, id, at) }
  return { message: message as unknown as SentMessage, json: '', bytes: checkParts(message, ownJson, stamp.bytes), ownJson, stamp }
}

export class ByteQueue implements MessageQueue {
  readonly keepParts = keepParts
  readonly #envelope: BodyBuilder
  // (Filled, so the array holds objects from the start: its first slab does not change its kind.)
  #slabs: Array<Slab | undefined> = new Array<Slab | undefined>(FIRST_CAPACITY).fill(undefined)
  #at = new Uint32Array(FIRST_CAPACITY)
  /** The text's UTF-8 length, times two, plus one when it is ASCII only. */
  #sizes = new Uint32Array(FIRST_CAPACITY)
  #head = 0
  #tail = 0

  constructor(envelope: BodyBuilder) {
    this.#envelope = envelope
  }

  get length(): number {
    return this.#tail - this.#head
  }

  /** Copies `built`'s text into the arena and queues it last. */
  hold(built: BuiltMessage): void {
    const ascii = isAscii(built)
    const at = writeMessage(built, ascii)
    if (this.#tail === this.#at.length) this.#makeRoom()
    const i = this.#tail++
    this.#slabs[i] = currentSlab()
    this.#at[i] = at
    this.#sizes[i] = built.bytes * 2 + (ascii ? 1 : 0)
  }

  /** The texts of the messages queued, in order, read back (for the spill at exit: rarely). */
  texts(): string[] {
    const texts: string[] = []
    for (let i = this.#head; i < this.#tail; i++) {
      const size = this.#sizes[i]
      texts.push(heldText({ slab: this.#slabs[i]!, at: this.#at[i], bytes: size >>> 1, ascii: (size & 1) === 1 }))
    }
    return texts
  }

  take(count: number, maxCount: number, maxBodyBytes?: number): QueueBatch[] {
    return cut(this.#takeFirst(count), maxCount, this.#envelope.overhead, maxBodyBytes).map((held) => new ByteBatch(this.#envelope, held))
  }

  hide(): void {}

  /** Removes the first `count` messages, and gives them as held regions. */
  #takeFirst(count: number): Held[] {
    const from = this.#head
    const to = Math.min(from + count, this.#tail)
    const taken: Held[] = new Array<Held>(to - from)
    for (let i = from; i < to; i++) {
      const size = this.#sizes[i]
      taken[i - from] = { slab: this.#slabs[i]!, at: this.#at[i], bytes: size >>> 1, ascii: (size & 1) === 1 }
    }
    // (A slab is not kept reachable from here once its messages are taken.)
    this.#slabs.fill(undefined, from, to)
    this.#head = to
    if (this.#head === this.#tail) this.#head = this.#tail = 0
    return taken
  }

  /** Full at the end: moves the queue to the front, or grows (twice the size) when that frees nothing. */
  #makeRoom(): void {
    const length = this.length
    if (this.#head > 0) {
      this.#slabs.copyWithin(0, this.#head, this.#tail)
      this.#slabs.fill(undefined, length, this.#tail)
      this.#at.copyWithin(0, this.#head, this.#tail)
      this.#sizes.copyWithin(0, this.#head, this.#tail)
      this.#head = 0
      this.#tail = length
    }
    if (this.#tail < this.#at.length) return
    const grown = this.#at.length * 2
    this.#slabs.length = grown
    this.#slabs.fill(undefined, this.#at.length)
    const at = new Uint32Array(grown)
    at.set(this.#at)
    this.#at = at
    const sizes = new Uint32Array(grown)
    sizes.set(this.#sizes)
    this.#sizes = sizes
  }
}

/** A batch of held messages; its body is made in the arena on first use and freed with it. */
class ByteBatch implements QueueBatch {
  readonly #envelope: BodyBuilder
  readonly #held: readonly Held[]
  #body: [body: Uint8Array<ArrayBuffer>, region: Held] | undefined
  #split = false
  #released = false

  /** Its body's exact UTF-8 size, counted once (each attempt reads it). */
  readonly size: number

  constructor(envelope: BodyBuilder, held: readonly Held[]) {
    this.#envelope = envelope
    this.#held = held
    this.size = envelope.size(held)
  }

  get length(): number {
    return this.#held.length
  }

  body(): Uint8Array<ArrayBuffer> {
    return (this.#body ??= heldBody(this.#envelope, this.#held))[0]
  }

  texts(): string[] {
    return this.#held.map(heldText)
  }

  halves(): [QueueBatch, QueueBatch] {
    this.#split = true
    const half = Math.ceil(this.#held.length / 2)
    return [new ByteBatch(this.#envelope, this.#held.slice(0, half)), new ByteBatch(this.#envelope, this.#held.slice(half))]
  }

  release(written?: Promise<unknown>): void {
    if (this.#released) return
    this.#released = true
    const region = this.#body?.[1]
    if (region) {
      if (written) void written.then(() => release(region))
      else release(region)
    }
    if (!this.#split) for (const m of this.#held) release(m)
  }
}
