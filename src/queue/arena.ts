/**
 * Node only (./byte-queue.ts; not in the browser build): where a client with the Node transport
 * keeps its queued messages and request bodies, as UTF-8 bytes in reused 256 KiB slabs outside the JavaScript heap.
 *
 * Why: held as strings, every queued message survives the young generation's collections and is
 * copied (then promoted) by each; V8 answers that survival by growing the young generation to its
 * 32 MB limit, and the promoted strings and bodies, dead soon after, fill the old generation until
 * its next full collection. Each new page the heap touches is also a page fault (a zeroed page).
 * Measured with bench/peers.mjs (`--part e2e --sdk ours`, interleaved with the build before):
 * a lower peak RSS and fewer minor page faults than strings, CPU per event unchanged (the peak
 * RSS of today's build is in docs/performance.md). A slab
 * is free again once every message and body in it is settled; free slabs are kept for the next
 * ones (`SPARE_SLABS`). One arena serves every client of the process.
 *
 * A body is handed to the transport as a view of its slab, so it is freed only once the transport
 * no longer reads it: only the Node transport is given one, and its answer says when (`written`).
 * Each region is released once, by the batch that owns it (./byte-queue.ts `ByteBatch#release`,
 * which a second call leaves alone): a second release would free a slab still in use.
 */
import type { MessageType } from '../message/types.js'
import { stampTemplate, stampValue, type BodyBuilder, type Stamp, type Template } from '../message/wire.js'
import type { BuiltMessage } from './message-queue.js'

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
 * A region of a slab: a message's JSON text, as its batch carries it (made when the batch is cut,
 * ./byte-queue.ts), or a request body.
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

/** Writes the stamped text (`"type":…,"timestamp":"<at>"}`) at `from`: its constant parts, and the stamp's values between them. */
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
 * there is one, skipping `write`'s argument checks (its JavaScript alone was 0.27 µs a call in a
 * CPU profile of a loop of `track()` calls, `node --no-turbo-inlining --cpu-prof`).
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
