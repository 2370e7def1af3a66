import { afterEach, describe, expect, it, vi } from 'vitest'
import { heldBody, heldText, release, releaseBody, type Held } from '../../src/platform/arena.js'
import { BodyBuilder } from '../../src/client/batcher.js'
import type { QueuedMessage } from '../../src/client/build-message.js'
import type { SentMessage } from '../../src/message/types.js'
import { HeldQueue } from '../../src/platform/held-queue.js'

/** A message held in the arena, as the client queues it (a built message's text, without its parts), then taken. */
const held = (json: string): Held => {
  const queue = new HeldQueue()
  queue.hold({ message: {} as SentMessage, json, bytes: Buffer.byteLength(json) })
  return queue.splice(0, 1)[0]
}
const region = (m: QueuedMessage) => m as Held

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
    for (const builder of [new BodyBuilder('key', false), new BodyBuilder('kéy-東京"\\\0', true)]) {
      const texts = ['{"a":1}', '{"b":"é😀"}', '{"c":[1,{"d":"東京"}]}']
      const messages = texts.map(held)
      const body = heldBody(builder, messages)
      const text = builder.build(texts.map((json) => ({ json, bytes: Buffer.byteLength(json) })), new Date().toISOString())
      expect(Buffer.from(body).equals(Buffer.from(text))).toBe(true)
      expect(body.byteLength).toBe(builder.size(messages))
      // One message, and none: the envelope alone.
      const one = heldBody(builder, messages.slice(1, 2))
      const none = heldBody(builder, [])
      expect(Buffer.from(one).toString()).toBe(builder.build([{ json: texts[1], bytes: 0 }], new Date().toISOString()))
      expect(Buffer.from(none).toString()).toBe(builder.build([], new Date().toISOString()))
      for (const m of messages) release(region(m))
      for (const made of [body, one, none]) releaseBody(made)
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

  it('releases a body only once the transport has written it, when an answer came first', async () => {
    const builder = new BodyBuilder('key', false)
    const messages = ['{"n":1}', '{"n":2}'].map(held)
    const body = heldBody(builder, messages)
    for (const m of messages) release(region(m))
    let written!: () => void
    releaseBody(body, new Promise<void>((done) => (written = done)))
    // Still being written: its slab is not reused (a new message goes after the body).
    const during = held('{"n":3}')
    expect(region(during).at).toBeGreaterThan(0)
    release(region(during))
    written()
    await new Promise((r) => setImmediate(r))
    const after = held('{"n":4}')
    expect(region(after).at).toBe(0)
    release(region(after))
  })

  it('releaseBody leaves other bodies alone and counts a body once', () => {
    const builder = new BodyBuilder('key', false)
    const keep = held('{"keep":true}')
    const body = heldBody(builder, [keep])
    releaseBody('a string body')
    releaseBody(new Uint8Array(10))
    releaseBody(undefined)
    releaseBody(body)
    releaseBody(body)
    // `keep` still holds the slab: a second release of the body did not free it under it.
    const next = held('{"n":5}')
    expect(region(next).at).toBeGreaterThan(region(keep).at)
    expect(heldText(region(keep))).toBe('{"keep":true}')
    release(region(keep))
    release(region(next))
  })
})
