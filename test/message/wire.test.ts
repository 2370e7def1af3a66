import { describe, expect, it } from 'vitest'
import { BodyBuilder, cut as splitIntoBatches } from '../../src/message/wire.js'
import type { TextMessage } from '../../src/queue/text-queue.js'
import { utf8Length } from '../../src/limits.js'

const queued = (bytes: number, id = 'm'): TextMessage => {
  // A JSON string of exactly `bytes` bytes.
  const pad = Math.max(0, bytes - JSON.stringify({ id, p: '' }).length)
  const json = JSON.stringify({ id, p: 'x'.repeat(pad) })
  return { json, bytes: utf8Length(json) }
}


describe('BodyBuilder', () => {
  it('assembles the envelope from the message strings; size() is its exact UTF-8 length', () => {
    const bodies = new BodyBuilder('key', false, utf8Length)
    const messages = [queued(50, 'a'), queued(80, 'é😀'), queued(30, 'c')]
    const body = bodies.build(messages, '2026-11-22T10:00:00.000Z') as string
    expect(typeof body).toBe('string')
    const parsed = JSON.parse(body)
    expect(Object.keys(parsed)).toEqual(['batch', 'sentAt', 'context'])
    expect(parsed.batch.map((m: { id: string }) => m.id)).toEqual(['a', 'é😀', 'c'])
    expect(parsed.sentAt).toBe('2026-11-22T10:00:00.000Z')
    expect(parsed.context.library.name).toBe('isomorphic-analytics')
    expect(bodies.size(messages)).toBe(Buffer.byteLength(body))
    expect(bodies.size([])).toBe(bodies.overhead)
    expect(Buffer.byteLength(bodies.build([], '2026-11-22T10:00:00.000Z'))).toBe(bodies.overhead)
  })

  it('plainText adds writeKey, counted in the overhead', () => {
    const plain = new BodyBuilder('kéy"\\', true, utf8Length)
    const body = plain.build([queued(40)], '2026-11-22T10:00:00.000Z') as string
    expect(JSON.parse(body).writeKey).toBe('kéy"\\')
    expect(plain.size([queued(40)])).toBe(Buffer.byteLength(body))
    expect(plain.overhead).toBeGreaterThan(new BodyBuilder('kéy"\\', false, utf8Length).overhead)
  })
})

describe('cut (how queues split taken messages into batches)', () => {
  const overhead = 100

  it('returns no batches for no messages', () => {
    expect(splitIntoBatches([], 10, overhead)).toEqual([])
  })

  it('splits by count, in order', () => {
    const messages = Array.from({ length: 25 }, (_, i) => queued(20, String(i)))
    const batches = splitIntoBatches(messages, 10, overhead)
    expect(batches.map((b) => b.length)).toEqual([10, 10, 5])
    expect(batches.flat()).toEqual(messages)
  })

  it('splits by bytes: overhead + messages + commas never exceed the maximum', () => {
    const messages = Array.from({ length: 10 }, () => queued(100))
    // 100 + 3×100 + 2 commas = 402 fits 402; a 4th would need 503.
    const batches = splitIntoBatches(messages, 100, overhead, 402)
    expect(batches.map((b) => b.length)).toEqual([3, 3, 3, 1])
    for (const batch of batches) {
      const bytes = overhead + batch.reduce((n, m) => n + m.bytes, 0) + batch.length - 1
      expect(bytes).toBeLessThanOrEqual(402)
    }
    expect(splitIntoBatches(messages, 100, overhead, 401).map((b) => b.length)).toEqual([2, 2, 2, 2, 2])
  })

  it('uses 500,000 bytes by default', () => {
    const messages = Array.from({ length: 40 }, () => queued(31_000))
    const batches = splitIntoBatches(messages, 1000, overhead)
    for (const batch of batches) {
      expect(overhead + batch.reduce((n, m) => n + m.bytes + 1, -1)).toBeLessThanOrEqual(500_000)
    }
    expect(batches.map((b) => b.length)).toEqual([16, 16, 8])
  })

  it('a message too big for any batch still gets one of its own (the server decides)', () => {
    const batches = splitIntoBatches([queued(10), queued(1000), queued(10)], 10, overhead, 500)
    expect(batches.map((b) => b.length)).toEqual([1, 1, 1])
  })
})
