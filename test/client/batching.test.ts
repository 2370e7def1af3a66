import { describe, expect, it, vi } from 'vitest'
import { collector, createTestClient, installServer, trackInput } from '../helpers/client.js'

installServer()

const MAX_BODY = 500_000

describe('flushAt', () => {
  it('sends once flushAt messages are queued, not before', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAt: 5, flushAfter: 60_000 })
    for (let i = 0; i < 4; i++) client.track(trackInput(i))
    await vi.advanceTimersByTimeAsync(1000)
    expect(wire.requests).toHaveLength(0)
    expect(client.stats().queued).toBe(4)
    client.track(trackInput(4))
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests).toHaveLength(1)
    expect(wire.requests[0].body.batch.map((m) => m.userId)).toEqual(['user-0', 'user-1', 'user-2', 'user-3', 'user-4'])
  })

  it('flushAt: 1 sends each message at once, in its own request', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAt: 1, flushAfter: 60_000 })
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests).toHaveLength(1)
    client.track(trackInput(1))
    client.track(trackInput(2))
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests.map((r) => r.body.batch.length)).toEqual([1, 1, 1])
    expect(client.stats().queued).toBe(0)
  })

  it('no batch holds more than flushAt messages, and every message is sent once, in order within a batch', async () => {
    const wire = collector()
    const client = createTestClient({ flushAt: 7, flushAfter: 60_000 })
    // Queue 30 while a flush of the first 7 is already going; then flush the rest.
    const sent = Array.from({ length: 30 }, (_, i) => client.track(trackInput(i)))
    expect(await client.flush()).toEqual({ delivered: 30, failed: 0 })
    const sizes = wire.requests.map((r) => r.body.batch.length)
    expect(Math.max(...sizes)).toBeLessThanOrEqual(7)
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(30)
    for (const r of wire.requests) {
      const indexes = r.body.batch.map((m) => sent.findIndex((s) => s.messageId === m.messageId))
      expect(indexes).toEqual([...indexes].sort((a, b) => a - b))
    }
    expect(new Set(wire.messages().map((m) => m.messageId))).toEqual(new Set(sent.map((m) => m.messageId)))
  })
})

describe('500,000-byte bodies', () => {
  it('40 messages of ~31 KB with flushAt 100 go in several requests, each at most 500,000 bytes', async () => {
    const wire = collector()
    const client = createTestClient({ flushAt: 100, flushAfter: 60_000 })
    const sent = Array.from({ length: 40 }, (_, i) => client.track(trackInput(i, { properties: { blob: 'x'.repeat(31_000) } })))
    expect(await client.flush()).toEqual({ delivered: 40, failed: 0 })
    const sizes = wire.requests.map((r) => Buffer.byteLength(r.text))
    // 40 × ~31 KB ≈ 1.25 MB: at least 3 requests, and packing fills each close to the limit.
    expect(wire.requests.length).toBeGreaterThanOrEqual(3)
    expect(wire.requests.length).toBeLessThanOrEqual(4)
    for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_BODY)
    const ids = wire.messages().map((m) => m.messageId)
    expect(ids).toHaveLength(40)
    expect(new Set(ids)).toEqual(new Set(sent.map((m) => m.messageId)))
  })

  it('counts bytes, not characters: 2-byte text packs half as many messages per request', async () => {
    const wire = collector()
    const client = createTestClient({ flushAt: 100, flushAfter: 60_000 })
    // Each message is ~15,600 characters but ~31,000 UTF-8 bytes.
    for (let i = 0; i < 40; i++) client.track(trackInput(i, { properties: { blob: 'é'.repeat(15_400) } }))
    expect(await client.flush()).toEqual({ delivered: 40, failed: 0 })
    expect(wire.requests.length).toBeGreaterThanOrEqual(3)
    for (const r of wire.requests) {
      expect(r.text.length).toBeLessThan(MAX_BODY)
      expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(MAX_BODY)
    }
    expect(wire.messages()).toHaveLength(40)
  })

  it('a flushAt trigger also splits by bytes', async () => {
    const wire = collector()
    const client = createTestClient({ flushAt: 20, flushAfter: 60_000 })
    for (let i = 0; i < 20; i++) client.track(trackInput(i, { properties: { blob: 'y'.repeat(31_500) } }))
    await vi.waitFor(() => expect(wire.messages()).toHaveLength(20))
    expect(wire.requests.length).toBe(2)
    for (const r of wire.requests) expect(Buffer.byteLength(r.text)).toBeLessThanOrEqual(MAX_BODY)
  })
})
