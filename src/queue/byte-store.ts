/**
 * Node only (not in the browser build): the byte store, the queue of a client with the Node
 * transport. Its messages and request bodies are UTF-8 bytes in reused 256 KiB slabs outside the
 * JavaScript heap (the arena, below the queue in this file), and a queued message is numbers only
 * (where in which slab, how long, ASCII or not) in typed arrays, plus its slab in a plain array:
 * no object of its own until its batch is cut (`take`, in the dispatch task, never on the
 * caller's stack).
 *
 * Why: held as strings, or as an object per message, every queued message survives the young
 * generation's collections and is copied (then promoted) by each; V8 answers that survival by
 * growing the young generation to its 32 MB limit, and the promoted strings and bodies, dead soon
 * after, fill the old generation until its next full collection. Each new page the heap touches
 * is also a page fault (a zeroed page). The heap kept per queued message after a full collection
 * is a few bytes here, against about a hundred with an object and a string per message;
 * bench/peers.mjs (`--part track`, `--part e2e`) showed a lower peak RSS and fewer minor page
 * faults in interleaved runs against the build before, CPU per event unchanged (the figures are
 * in docs/performance.md).
 *
 * A slab is free again once every message and body in it is settled; free slabs are kept for the
 * next ones (`SPARE_SLABS`). One arena serves every client of the process. A body is handed to
 * the transport as a view of its slab, so it is freed only once the transport no longer reads it:
 * only the Node transport is given one, and its answer says when (`written`). Each region is
 * released once, by the batch that owns it (`ByteBatch#release`, which a second call leaves
 * alone): a second release would free a slab still in use.
 */
import { MessageTooLargeError } from '../errors.js'
import { MAX_DEPTH, MAX_MESSAGE_BYTES } from '../limits.js'
import { refuseCollections, tooDeep, tooDeepError } from '../message/validate.js'
import type { MessageType, SentMessage } from '../message/types.js'
import { cut, stampedLength, stampTemplate, stampValue, type BodyBuilder, type Stamp, type Template } from '../message/wire.js'
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
 * fields as JSON and the stamped fields' values, which `writeMessage` writes one after the
 * other: neither the whole text nor the stamped fields' text is ever made as a string. Checked as
 * `serializeMessage` checks a whole text.
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

/*
 * The arena: the slabs, what is written in them, and when they are free again.
 */

/** What the arena reads of a built message. */
type BuiltText = Pick<BuiltMessage, 'json' | 'bytes' | 'ownJson' | 'stamp'>

/** Bytes of a slab; a larger message or body gets a slab of its own, not kept for reuse. */
const SLAB_BYTES = 256 * 1024
/**
 * Free slabs kept for reuse: 10 MiB, about what a full queue at the default `maxQueueSize` (10,000
 * messages) takes, so bursts up to that reuse memory already touched instead of new pages (a page
 * fault each); past that, a free slab is left to the garbage collector.
 */
const SPARE_SLABS = 40

export interface Slab {
  readonly bytes: Buffer
  /** Bytes given out so far (regions are never reused one by one: the slab is, once all are free). */
  used: number
  /** Regions of it not yet released. */
  live: number
  /** The next free slab kept for reuse, while this one is kept (see `keep`). */
  next: Slab | undefined
}

/**
 * A region of a slab: a message's JSON text, as its batch carries it (made when the batch is cut:
 * `ByteQueue#take`), or a request body.
 */
export interface Held {
  readonly slab: Slab
  readonly at: number
  /** Its length: the text's UTF-8 bytes. */
  readonly bytes: number
  /** Whether its text is ASCII only (read back as Latin-1: one byte a character). */
  readonly ascii: boolean
}

let current: Slab | undefined
/**
 * The free slabs kept, a list through their `next` (and how many): not an array, whose `pop()`
 * in `room` was compiled for an empty array's kind of elements and deoptimised (with the
 * client's `#accept` it is inlined in) once the first slab was kept (`node --trace-deopt`).
 */
let spare: Slab | undefined
let spareCount = 0

/**
 * Copies a built message's JSON text (`ascii`: `isAscii(built)`, which the caller keeps too) into
 * the current slab (`current` after the call), from its parts where it has them (the caller's
 * fields, then the stamped ones from their values: no text of the whole, nor of the stamped
 * fields, is ever made), else as it is. Where it starts.
 */
export function writeMessage(built: BuiltText, ascii: boolean): number {
  const { json, bytes, ownJson, stamp } = built
  const at = room(bytes)
  const slab = current!.bytes
  if (ownJson === undefined || stamp === undefined) write(slab, json, at, bytes, ascii)
  else {
    // `{…}` written as `{…,` (its `}` overwritten), or `{}` as `{`; then the stamped fields.
    const head = ownJson.length > 2 ? bytes - stamp.bytes : 1
    write(slab, ownJson, at, head, ascii)
    if (head > 1) slab[at + head - 1] = 0x2c // ','
    writeStamp(slab, at + head, stamp)
  }
  return at
}

/**
 * A template's constant parts (../message/wire.ts) as bytes (its markers left as they are): made
 * on first use, as this module is loaded where there is no `Buffer` too (a worker bundling the
 * Node build).
 */
const templateBytes = new WeakMap<Template, ReadonlyArray<Buffer | string | undefined>>()

const bytesOf = (template: Template): ReadonlyArray<Buffer | string | undefined> => {
  let parts = templateBytes.get(template)
  if (parts === undefined) templateBytes.set(template, (parts = template.map((part, i) => (i & 1 ? part : Buffer.from(part!, 'utf8')))))
  return parts
}

/** A message type's stamped text as bytes (a lookup per type, cheaper than the WeakMap's). */
const stampBytes: Partial<Record<MessageType, ReadonlyArray<Buffer | string | undefined>>> = {}

/**
 * Writes the stamped text (`"type":…,"timestamp":"<at>"}`) at `from`: its constant parts as bytes,
 * and the stamp's values between them (the text itself is never made).
 */
function writeStamp(slab: Buffer, from: number, stamp: Stamp): void {
  const parts = (stampBytes[stamp.type] ??= bytesOf(stampTemplate(stamp.type)))
  let i = from
  for (let n = 0; n < parts.length - 1; n += 2) {
    const part = parts[n] as Buffer
    slab.set(part, i)
    i += part.length
    const value = stampValue(parts[n + 1] as string, stamp)
    i += write(slab, value, i, value.length, true)
  }
  // The end is short (`"}`): set byte by byte, cheaper than a call.
  const end = parts[parts.length - 1] as Buffer
  for (let k = 0; k < end.length; k++) slab[i + k] = end[k]!
}

/**
 * Whether a built message's text is ASCII only: its UTF-8 length is its length in characters.
 * Built as parts, that is theirs (`{…}` becomes `{…,`, `{}` becomes `{`): the whole is never made.
 */
export function isAscii({ json, bytes, ownJson, stamp }: BuiltText): boolean {
  if (ownJson === undefined || stamp === undefined) return bytes === json.length
  return bytes === (ownJson.length > 2 ? ownJson.length : 1) + stamp.bytes
}

/** Node's own methods behind `Buffer#write`, where the runtime has them. */
interface Writes {
  latin1Write?: (text: string, at: number, length: number) => number
  utf8Write?: (text: string, at: number, length: number) => number
}

/**
 * `slab.write(text, at, length, ascii ? 'latin1' : 'utf8')`, through the method behind it where
 * there is one, skipping `write`'s argument checks (a CPU profile of a loop of `track()` calls,
 * `node --no-turbo-inlining --cpu-prof`, shows them; the A/B that keeps this, and the view and
 * `set` in `heldBody`, is in docs/performance.md).
 */
function write(slab: Buffer, text: string, at: number, length: number, ascii: boolean): number {
  const method = ascii ? (slab as Writes).latin1Write : (slab as Writes).utf8Write
  return method ? method.call(slab, text, at, length) : slab.write(text, at, length, ascii ? 'latin1' : 'utf8')
}

/** The slab the last `writeMessage` wrote to. */
export const currentSlab = (): Slab => current!

/** The text of a held message (for the errors and events that carry it: rarely read). */
export const heldText = (held: Held): string => held.slab.bytes.toString(held.ascii ? 'latin1' : 'utf8', held.at, held.at + held.bytes)

/**
 * `batch`'s request body (the envelope of `builder`, ../message/wire.ts, around its held
 * messages), in a slab: the body, and its region (to `release` once no attempt sends it and the
 * transport has written it).
 */
export function heldBody(builder: BodyBuilder, batch: readonly Held[]): [body: Uint8Array<ArrayBuffer>, region: Held] {
  const parts = bytesOf(builder.template)
  const sentAt = new Date().toISOString()
  // Its markers are the messages (`undefined`) and `sentAt` (an ISO date: ASCII, a byte a character).
  let length = Math.max(0, batch.length - 1)
  for (let n = 0; n < parts.length; n++) length += n & 1 ? (parts[n] === undefined ? 0 : sentAt.length) : (parts[n] as Buffer).length
  for (const m of batch) length += m.bytes
  const at = room(length)
  const slab = current!
  const out = slab.bytes
  let i = at
  for (let n = 0; n < parts.length; n++) {
    const part = parts[n]
    if (!(n & 1)) {
      out.set(part as Buffer, i)
      i += (part as Buffer).length
    } else if (part !== undefined) i += write(out, sentAt, i, sentAt.length, true)
    else {
      for (let k = 0; k < batch.length; k++) {
        if (k > 0) out[i++] = 0x2c // ','
        const m = batch[k]!
        // A view and `set`: what `Buffer#copy` does after its checks, which took more than half of
        // each copy's time in a fresh process.
        const from = m.slab.bytes
        out.set(new Uint8Array(from.buffer, from.byteOffset + m.at, m.bytes), i)
        i += m.bytes
      }
    }
  }
  return [out.subarray(at, at + length) as Uint8Array<ArrayBuffer>, { slab, at, bytes: length, ascii: true }]
}

/** The region is no longer read: its slab is free again once all of its regions are. */
export function release(held: Held): void {
  const slab = held.slab
  if (--slab.live > 0) return
  slab.used = 0
  if (slab !== current) keep(slab)
}

/** A free slab is kept for the next, unless enough are (or it is not of the usual size). */
function keep(slab: Slab): void {
  if (slab.bytes.length !== SLAB_BYTES || spareCount >= SPARE_SLABS) return
  slab.next = spare
  spare = slab
  spareCount++
}

/** A kept free slab, or a new one. */
function reuse(): Slab {
  const slab = spare
  if (slab === undefined) return newSlab(SLAB_BYTES)
  spare = slab.next
  slab.next = undefined
  spareCount--
  return slab
}

/** `length` bytes at the end of the current slab, or of a new (or spare) one, made current: where they start. */
function room(length: number): number {
  let slab = current
  if (slab === undefined || slab.used + length > slab.bytes.length) {
    // The slab given up on is kept once free (see `release`), or now if free already.
    if (slab !== undefined && slab.live === 0) keep(slab)
    slab = length <= SLAB_BYTES ? reuse() : newSlab(length)
    current = slab
  }
  const at = slab.used
  slab.used += length
  slab.live++
  return at
}

const newSlab = (size: number): Slab => ({ bytes: Buffer.allocUnsafeSlow(size), used: 0, live: 0, next: undefined })
