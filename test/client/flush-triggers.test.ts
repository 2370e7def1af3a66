import { describe, expect, it, vi } from 'vitest'
import { collector, createTestClient, installServer, trackInput } from '../helpers/client.js'

installServer()

describe('flushAfter', () => {
  it('sends queued messages flushAfter ms after the last flush (here: the client’s start)', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAfter: 1000 })
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(999)
    expect(wire.requests).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(1)
    expect(client.stats()).toMatchObject({ queued: 0, delivered: 1 })
  })

  it('counts from the last flush, not from the message', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAfter: 1000, flushAt: 2 })
    await vi.advanceTimersByTimeAsync(3000)
    // A flushAt flush at t=3000 …
    client.track(trackInput(0))
    client.track(trackInput(1))
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests).toHaveLength(1)
    // … so a message at t=3500 goes at t=4000, not t=4500.
    await vi.advanceTimersByTimeAsync(500)
    client.track(trackInput(2))
    await vi.advanceTimersByTimeAsync(499)
    expect(wire.requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(2)
    expect(wire.requests[1].body.batch.map((m) => m.userId)).toEqual(['user-2'])
  })

  it('a message queued long after the last flush goes at once', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAfter: 1000 })
    await vi.advanceTimersByTimeAsync(10_000)
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests).toHaveLength(1)
  })

  it('keeps flushing on schedule as messages keep coming', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAfter: 1000 })
    for (let second = 0; second < 5; second++) {
      client.track(trackInput(second))
      await vi.advanceTimersByTimeAsync(1000)
    }
    expect(wire.requests.map((r) => r.body.batch.length)).toEqual([1, 1, 1, 1, 1])
  })

  it('sends nothing when nothing is queued', async () => {
    vi.useFakeTimers()
    const wire = collector()
    createTestClient({ flushAfter: 100 })
    await vi.advanceTimersByTimeAsync(10_000)
    expect(wire.requests).toHaveLength(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('the default is 5000 ms', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(4999)
    expect(wire.requests).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(1)
  })
})

describe('flush() and close()', () => {
  it('flush() sends what is queued at once', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAt: 100, flushAfter: 60_000 })
    for (let i = 0; i < 3; i++) client.track(trackInput(i))
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await result).toEqual({ delivered: 3, failed: 0 })
    expect(wire.requests).toHaveLength(1)
    expect(wire.requests[0].body.batch).toHaveLength(3)
  })

  it('close() sends what is queued, and stops the timer', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAt: 100, flushAfter: 1000 })
    for (let i = 0; i < 3; i++) client.track(trackInput(i))
    const result = client.close()
    await vi.advanceTimersByTimeAsync(0)
    expect(await result).toEqual({ delivered: 3, failed: 0 })
    expect(wire.messages()).toHaveLength(3)
    expect(vi.getTimerCount()).toBe(0)
    await vi.advanceTimersByTimeAsync(10_000)
    expect(wire.requests).toHaveLength(1)
  })

  it('a flush() resets the flushAfter clock', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ flushAfter: 1000 })
    await vi.advanceTimersByTimeAsync(900)
    await client.flush()
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(999)
    expect(wire.requests).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(1)
  })
})
