import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { QueueFullError } from '../../src/index.js'
import { collector, createTestClient, HttpResponse, installServer, listen, trackInput } from '../helpers/client.js'

installServer()

describe('maxQueueSize', () => {
  it('drops and reports a message beyond the bound; track() does not throw', async () => {
    vi.useFakeTimers()
    const wire = collector()
    const client = createTestClient({ maxQueueSize: 5, flushAt: 100 })
    const events = listen(client)
    const kept = Array.from({ length: 5 }, (_, i) => client.track(trackInput(i)))
    let dropped: ReturnType<typeof client.track> | undefined
    expect(() => {
      dropped = client.track(trackInput(5))
    }).not.toThrow()
    expect(dropped).toMatchObject({ type: 'track', userId: 'user-5' })
    expect(client.stats()).toMatchObject({ queued: 5, dropped: 1 })
    await vi.advanceTimersByTimeAsync(0)
    expect(events.error).toHaveLength(1)
    expect(events.error[0]).toBeInstanceOf(QueueFullError)
    expect(events.error[0].code).toBe('QUEUE_FULL')
    expect(events.error[0].message).toContain('5')
    expect(events.error[0].messages).toEqual([dropped])
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await result).toEqual({ delivered: 5, failed: 0 })
    expect(wire.messages().map((m) => m.messageId)).toEqual(kept.map((m) => m.messageId))
  })

  it('counts messages in flight: capacity returns once they are delivered', async () => {
    vi.useFakeTimers()
    const wire = collector(async () => {
      await delay(1000)
      return HttpResponse.json({})
    })
    const client = createTestClient({ maxQueueSize: 5, flushAt: 5 })
    const events = listen(client)
    for (let i = 0; i < 5; i++) client.track(trackInput(i))
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 5 })
    client.track(trackInput(5))
    expect(client.stats().dropped).toBe(1)
    await vi.advanceTimersByTimeAsync(1000)
    expect(client.stats()).toMatchObject({ inFlight: 0, delivered: 5 })
    client.track(trackInput(6))
    expect(client.stats()).toMatchObject({ queued: 1, dropped: 1 })
    await vi.advanceTimersByTimeAsync(0)
    expect(events.error).toHaveLength(1)
    expect(wire.messages().map((m) => m.userId)).not.toContain('user-5')
  })

  it('keeps memory bounded during an outage: held messages never exceed the bound', async () => {
    vi.useFakeTimers()
    collector(() => HttpResponse.json({}, { status: 503 }))
    const client = createTestClient({ maxQueueSize: 50, flushAt: 10, maxRetries: 3 })
    const events = listen(client)
    let maxHeld = 0
    for (let i = 0; i < 1000; i++) {
      client.track(trackInput(i))
      const { queued, inFlight } = client.stats()
      maxHeld = Math.max(maxHeld, queued + inFlight)
      if (i % 50 === 0) await vi.advanceTimersByTimeAsync(10)
    }
    expect(maxHeld).toBe(50)
    const stats = client.stats()
    expect(stats.dropped).toBeGreaterThan(900)
    await vi.advanceTimersByTimeAsync(0)
    const reports = events.error.filter((e) => e.code === 'QUEUE_FULL')
    // One report per synchronous burst, carrying every message it dropped.
    expect(reports.length).toBeLessThan(stats.dropped)
    expect(reports.reduce((n, e) => n + e.messages.length, 0)).toBe(stats.dropped)
  })

  it('without an error listener, a drop is logged, not thrown', async () => {
    vi.useFakeTimers()
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    const client = createTestClient({ maxQueueSize: 1, flushAt: 10 })
    client.track(trackInput(0))
    expect(() => client.track(trackInput(1))).not.toThrow()
    await vi.advanceTimersByTimeAsync(0)
    expect(consoleError).toHaveBeenCalledTimes(1)
    expect(String(consoleError.mock.calls[0][0])).toContain('Queue is full')
  })
})

describe('maxConcurrentRequests', () => {
  it.each([
    [2, 2],
    [undefined, 8],
  ])('maxConcurrentRequests %s: never more than %i requests open at once', async (limit, expected) => {
    vi.useFakeTimers()
    let open = 0
    let peak = 0
    const wire = collector(async () => {
      open++
      peak = Math.max(peak, open)
      await delay(100)
      open--
      return HttpResponse.json({})
    })
    const client = createTestClient({ flushAt: 1, ...(limit ? { maxConcurrentRequests: limit } : {}) })
    for (let i = 0; i < 30; i++) client.track(trackInput(i))
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(5000)
    expect(await result).toEqual({ delivered: 30, failed: 0 })
    expect(peak).toBe(expected)
    expect(wire.requests).toHaveLength(30)
  })
})
