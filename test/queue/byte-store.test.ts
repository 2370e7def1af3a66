import { afterEach, describe, expect, it, vi } from 'vitest'
import { ByteQueue, currentSlab, heldBody, heldText, isAscii, keepParts, release, writeMessage, type Held } from '../../src/queue/byte-store.js'
import { BodyBuilder } from '../../src/message/wire.js'
import { utf8Length } from '../../src/limits.js'
import { buildMessage } from '../../src/client/build-message.js'
import type { SentMessage } from '../../src/message/types.js'

/** A built message of this JSON text, without parts. */
const built = (json: string) => ({ message: {} as SentMessage, json, bytes: Buffer.byteLength(json) })

/** A deterministic stream of numbers in [0, 1): the same cases on every run. */
function seeded(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)
}

const newQueue = () => new ByteQueue(new BodyBuilder('key', false, utf8Length))

/** Takes the first `count` messages as one batch: their texts, the batch then released. */
function takeTexts(queue: ByteQueue, count: number): string[] {
  const batches = queue.take(count, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)
  const texts = batches.flatMap((b) => b.texts())
  for (const b of batches) b.release()
  return texts
}

describe('ByteQueue (Node: queued messages as bytes in the arena)', () => {
  it('gives back every message\'s text in order, across slabs and past its first capacity', () => {
    const queue = newQueue()
    const texts = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ n: i, pad: 'x'.repeat(i % 300), word: i % 7 === 0 ? 'café 東京 😀' : 'plain' }))
    for (const text of texts) queue.hold(built(text))
    expect(queue.length).toBe(3000)
    const out: string[] = []
    while (queue.length) {
      for (const batch of queue.take(20, 20)) {
        out.push(...batch.texts())
        // Its size counts each message's exact UTF-8 bytes.
        expect(batch.size).toBe(Buffer.byteLength(new BodyBuilder('key', false, utf8Length).build(batch.texts().map((json) => ({ json })), new Date().toISOString())))
        batch.release()
      }
    }
    expect(out).toEqual(texts)
  })

  it('gives back what Array#splice(0, count) would, as holds and takes interleave', () => {
    const random = seeded(7)
    const queue = newQueue()
    const model: string[] = []
    let next = 0
    for (let step = 0; step < 4000; step++) {
      if (random() < 0.6) {
        const text = `{"i":${next++}}`
        queue.hold(built(text))
        model.push(text)
      } else {
        const count = Math.floor(random() * 40)
        expect(takeTexts(queue, count)).toEqual(model.splice(0, count))
      }
      expect(queue.length).toBe(model.length)
    }
    expect(takeTexts(queue, queue.length + 5)).toEqual(model.splice(0))
    expect(queue.length).toBe(0)
    expect(queue.take(5, 5)).toEqual([])
  })

  it('holds a built message from its two parts, byte for byte the whole text', () => {
    const queue = newQueue()
    const inputs = [
      { userId: 'u', event: 'Order Completed', properties: { total: 129.99, items: [{ sku: 'a' }] } },
      { anonymousId: 'ä', event: 'Tëst', properties: { city: '東京' } },
    ]
    const messages = inputs.map((input) => buildMessage('track', input, { context: undefined, integrations: undefined }, keepParts))
    for (const m of messages) {
      expect(m.ownJson).toBeDefined()
      queue.hold(m)
    }
    // Built as parts, the whole text is never made: the arena's copy is it.
    expect(messages.map((m) => m.json)).toEqual(['', ''])
    expect(takeTexts(queue, 2)).toEqual(messages.map((m) => JSON.stringify(m.message)))
  })

  it('holds the message as it was built, though the caller changes the returned object before it is held (a message waiting for an async schema verdict)', () => {
    const queue = newQueue()
    const built = buildMessage('track', { userId: 'u', event: 'E', timestamp: '2026-11-27T10:00:00.000Z' }, { context: undefined, integrations: undefined }, keepParts)
    const text = JSON.stringify(built.message)
    const message = built.message as unknown as Record<string, unknown>
    Object.assign(message, { type: 'identify', messageId: 'é-changed', timestamp: 'later, and longer than it was' })
    queue.hold(built)
    const [batch] = queue.take(1, 1)
    expect(batch.texts()).toEqual([text])
    expect(batch.size).toBe(new BodyBuilder('key', false, utf8Length).overhead + Buffer.byteLength(text))
    batch.release()
  })
})

/** A message written to the arena, as the byte store holds it (a built message's text, without its parts). */
const held = (json: string): Held => {
  const built = { message: {} as SentMessage, json, bytes: Buffer.byteLength(json) }
  const ascii = isAscii(built)
  const at = writeMessage(built, ascii)
  return { slab: currentSlab(), at, bytes: built.bytes, ascii }
}
const region = (m: Held) => m

afterEach(() => {
  vi.useRealTimers()
})

describe('the arena (Node: queued messages and bodies as bytes)', () => {
  it('keeps each message\'s exact text: ASCII, Latin-1, other scripts, emoji', () => {
    const texts = ['{"event":"Order Completed"}', '{"name":"café crème"}', '{"city":"東京"}', '{"mood":"😀","lone":"\\ud800"}']
    const messages = texts.map(held)
    expect(messages.map((m) => heldText(region(m)))).toEqual(texts)
    expect(messages.map((m) => region(m).ascii)).toEqual([true, false, false, false])
    for (const m of messages) release(region(m))
  })

  it('makes a body byte for byte as BodyBuilder makes the text, plainText and a non-ASCII write key included', () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-26T10:00:00.000Z'))
    // (A NUL in the key too: the arena cuts a builder's envelope once, at a NUL where `sentAt` goes.)
    for (const builder of [new BodyBuilder('key', false, utf8Length), new BodyBuilder('kéy-東京"\\\0', true, utf8Length)]) {
      const texts = ['{"a":1}', '{"b":"é😀"}', '{"c":[1,{"d":"東京"}]}']
      const messages = texts.map(held)
      const [body, bodyRegion] = heldBody(builder, messages)
      const text = builder.build(texts.map((json) => ({ json, bytes: Buffer.byteLength(json) })), new Date().toISOString())
      expect(Buffer.from(body).equals(Buffer.from(text))).toBe(true)
      expect(body.byteLength).toBe(builder.size(messages))
      // One message, and none: the envelope alone.
      const [one, oneRegion] = heldBody(builder, messages.slice(1, 2))
      const [none, noneRegion] = heldBody(builder, [])
      expect(Buffer.from(one).toString()).toBe(builder.build([{ json: texts[1] }], new Date().toISOString()))
      expect(Buffer.from(none).toString()).toBe(builder.build([], new Date().toISOString()))
      for (const m of messages) release(region(m))
      for (const made of [bodyRegion, oneRegion, noneRegion]) release(made)
    }
  })

  it('reuses a slab once every region in it is released, and not before', () => {
    const a = held('{"n":1}')
    const b = held('{"n":2}')
    expect(region(b).slab).toBe(region(a).slab)
    expect(region(b).at).toBe(region(a).at + region(a).bytes)
    release(region(a))
    // `b` still lives in it: the next message goes after it.
    const c = held('{"n":3}')
    expect(region(c).at).toBe(region(b).at + region(b).bytes)
    release(region(b))
    release(region(c))
    // All released: written from the start again, over the old bytes.
    const d = held('{"n":4}')
    expect(region(d).slab).toBe(region(a).slab)
    expect(region(d).at).toBe(0)
    expect(heldText(region(d))).toBe('{"n":4}')
    release(region(d))
  })

  it('gives a message larger than a slab one of its own, never reused for others', () => {
    const big = held(JSON.stringify({ p: 'x'.repeat(300 * 1024) }))
    expect(region(big).slab.bytes.length).toBe(region(big).bytes)
    const small = held('{"n":1}')
    expect(region(small).slab).not.toBe(region(big).slab)
    release(region(big))
    const next = held('{"n":2}')
    expect(region(next).slab).not.toBe(region(big).slab)
    release(region(small))
    release(region(next))
  })

  it('moves to a new slab when one is full, and reuses the full one once it is free', () => {
    const text = JSON.stringify({ p: 'y'.repeat(1000) })
    const first = held(text)
    const messages = [first]
    while (region(messages[messages.length - 1]).slab === region(first).slab) messages.push(held(text))
    const second = region(messages[messages.length - 1]).slab
    expect(second).not.toBe(region(first).slab)
    // The first slab free: kept, and taken when the second is full.
    for (const m of messages.slice(0, -1)) release(region(m))
    const more = [held(text)]
    while (region(more[more.length - 1]).slab === second) more.push(held(text))
    expect(region(more[more.length - 1]).slab).toBe(region(first).slab)
    expect(region(more[more.length - 1]).at).toBe(0)
    for (const m of [messages[messages.length - 1], ...more]) release(region(m))
  })
})
