import { describe, expect, it } from 'vitest'
import { HeldQueue } from '../../src/platform/held-queue.js'
import { heldText, release } from '../../src/platform/arena.js'
import { buildMessage } from '../../src/client/build-message.js'
import type { SentMessage } from '../../src/message/types.js'

/** A built message of this JSON text, without parts. */
const built = (json: string) => ({ message: {} as SentMessage, json, bytes: Buffer.byteLength(json) })

/** A deterministic stream of numbers in [0, 1): the same cases on every run. */
function seeded(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32)
}

describe('HeldQueue (Node: queued messages as bytes in the arena)', () => {
  it('gives back every message\'s text in order, across slabs and past its first capacity', () => {
    const queue = new HeldQueue()
    const texts = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ n: i, pad: 'x'.repeat(i % 300), word: i % 7 === 0 ? 'café 東京 😀' : 'plain' }))
    for (const text of texts) queue.hold(built(text))
    expect(queue.length).toBe(3000)
    const out: string[] = []
    while (queue.length) {
      const batch = queue.splice(0, 20)
      for (const m of batch) {
        out.push(heldText(m))
        expect(m.bytes).toBe(Buffer.byteLength(heldText(m)))
        expect(m.ascii).toBe(!heldText(m).includes('café'))
        release(m)
      }
    }
    expect(out).toEqual(texts)
  })

  it('removes and returns what Array#splice would, for any start and count, as holds and takes interleave', () => {
    const random = seeded(7)
    const queue = new HeldQueue()
    const model: string[] = []
    let next = 0
    for (let step = 0; step < 4000; step++) {
      if (random() < 0.6) {
        const text = `{"i":${next++}}`
        queue.hold(built(text))
        model.push(text)
      } else {
        const start = random() < 0.7 ? 0 : Math.floor(random() * (model.length + 2))
        const count = Math.floor(random() * 40)
        const taken = queue.splice(start, count)
        expect(taken.map(heldText)).toEqual(model.splice(start, count))
        for (const m of taken) release(m)
      }
      expect(queue.length).toBe(model.length)
    }
    // Without a count: everything from `start` on.
    const rest = queue.splice(1)
    expect(rest.map(heldText)).toEqual(model.splice(1))
    expect(queue.splice(0).map(heldText)).toEqual(model.splice(0))
    expect(queue.length).toBe(0)
    expect(queue.splice(0, 5)).toEqual([])
  })

  it('holds a built message from its two parts, byte for byte the whole text', () => {
    const queue = new HeldQueue()
    const inputs = [
      { userId: 'u', event: 'Order Completed', properties: { total: 129.99, items: [{ sku: 'a' }] } },
      { anonymousId: 'ä', event: 'Tëst', properties: { city: '東京' } },
    ]
    const messages = inputs.map((input) => buildMessage('track', input, { context: undefined, integrations: undefined }, true))
    for (const m of messages) {
      expect(m.ownJson).toBeDefined()
      queue.hold(m)
    }
    const taken = queue.splice(0)
    // Built as parts, the whole text is never made: the arena's copy is it.
    expect(messages.map((m) => m.json)).toEqual(['', ''])
    expect(taken.map(heldText)).toEqual(messages.map((m) => JSON.stringify(m.message)))
    expect(taken.map((m) => m.ascii)).toEqual([true, false])
    for (const m of taken) release(m)
  })

  it('holds the message as it was built, though the caller changes the returned object before it is held (a message waiting for an async schema verdict)', () => {
    const queue = new HeldQueue()
    const built = buildMessage('track', { userId: 'u', event: 'E', timestamp: '2026-11-27T10:00:00.000Z' }, { context: undefined, integrations: undefined }, true)
    const text = JSON.stringify(built.message)
    const message = built.message as unknown as Record<string, unknown>
    Object.assign(message, { type: 'identify', messageId: 'é-changed', timestamp: 'later, and longer than it was' })
    queue.hold(built)
    const [held] = queue.splice(0)
    expect(heldText(held)).toBe(text)
    expect(held.bytes).toBe(Buffer.byteLength(text))
    release(held)
  })
})
