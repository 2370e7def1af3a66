import { afterEach, describe, expect, it, vi } from 'vitest'
import { currentSlab, heldBody, heldText, isAscii, release, writeMessage, type Held } from '../../src/queue/arena.js'
import { BodyBuilder } from '../../src/message/wire.js'
import { utf8Length } from '../../src/limits.js'
import type { SentMessage } from '../../src/message/types.js'

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
