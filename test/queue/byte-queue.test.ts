import { describe, expect, it } from 'vitest'
import { ByteQueue } from '../../src/queue/byte-queue.js'
import { BodyBuilder } from '../../src/message/wire.js'
import { keepParts } from '../../src/queue/byte-queue.js'
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
