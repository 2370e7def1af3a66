import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { AbortedError, AnalyticsError } from '../../src/index.js'
import { collector, createTestClient, HttpResponse, installServer, listen, trackInput } from '../helpers/client.js'

installServer()

/** Tracks whether a promise has settled, without awaiting it. */
function watch<T>(promise: Promise<T>) {
  const state = { settled: false, value: undefined as T | undefined, rejected: false }
  promise.then((v) => { state.settled = true; state.value = v }, () => { state.settled = true; state.rejected = true })
  return state
}

describe('flush()', () => {
  it('resolves {delivered, failed} for what was queued', async () => {
    vi.useFakeTimers()
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 400 }) : HttpResponse.json({})))
    const client = createTestClient({ flushAt: 100, maxConcurrentRequests: 1 })
    listen(client)
    client.track(trackInput(0))
    client.track(trackInput(1))
    const first = client.flush()
    client.track(trackInput(2))
    const second = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await first).toEqual({ delivered: 0, failed: 2 })
    expect(await second).toEqual({ delivered: 1, failed: 2 })
  })

  it('resolves {0, 0} at once when nothing is queued or in flight', async () => {
    const wire = collector()
    const client = createTestClient()
    expect(await client.flush()).toEqual({ delivered: 0, failed: 0 })
    expect(wire.requests).toHaveLength(0)
  })

  it('never rejects, even when fetch throws synchronously', async () => {
    vi.useFakeTimers()
    const fetch = vi.fn(() => {
      throw new Error('fetch exploded')
    })
    const client = createTestClient({ fetch: fetch as never, maxRetries: 2 })
    const events = listen(client)
    client.track(trackInput())
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(60_000)
    expect(state).toMatchObject({ settled: true, rejected: false, value: { delivered: 0, failed: 1 } })
    expect(fetch).toHaveBeenCalledTimes(3)
    expect(events.error).toHaveLength(1)
    expect(events.error[0]).toBeInstanceOf(AnalyticsError)
    expect(events.error[0].message).toContain('fetch exploded')
  })

  it('settles when a refusal\'s body stalls after its headers (fetch transport): timeout covers the body', async () => {
    vi.useFakeTimers()
    collector(() => new HttpResponse(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{"message":"par')) }), {
      status: 500, headers: { 'Content-Type': 'application/json' },
    }))
    const client = createTestClient({ fetch: (url, init) => globalThis.fetch(url, init), timeout: 1000, maxRetries: 0 })
    const events = listen(client)
    client.track(trackInput())
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(1000)
    expect(state).toMatchObject({ settled: true, value: { delivered: 0, failed: 1 } })
    expect(events.error[0]).toMatchObject({ code: 'HTTP', status: 500 })
  })

  it('never rejects when fetch returns something that is not a Response', async () => {
    vi.useFakeTimers()
    const client = createTestClient({ fetch: (async () => 'nonsense') as never, maxRetries: 0 })
    const events = listen(client)
    client.track(trackInput())
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(1000)
    expect(state).toMatchObject({ settled: true, rejected: false, value: { delivered: 0, failed: 1 } })
    expect(events.error).toHaveLength(1)
  })

  it('never rejects when listeners throw; their throws are logged', async () => {
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    collector((_, i) => (i === 0 ? HttpResponse.json({}) : HttpResponse.json({}, { status: 400 })))
    const client = createTestClient({ flushAt: 100, maxConcurrentRequests: 1 })
    client.on('flush', () => {
      throw new Error('flush listener bug')
    })
    client.on('error', () => {
      throw new Error('error listener bug')
    })
    client.track(trackInput(0))
    const first = await client.flush()
    client.track(trackInput(1))
    const second = await client.flush()
    expect(first).toEqual({ delivered: 1, failed: 0 })
    expect(second).toEqual({ delivered: 0, failed: 1 })
    const logged = consoleError.mock.calls.map((c) => c.map(String).join(' '))
    expect(logged.some((l) => l.includes("'flush' listener threw") && l.includes('flush listener bug'))).toBe(true)
    expect(logged.some((l) => l.includes("'error' listener threw") && l.includes('error listener bug'))).toBe(true)
  })

  it('overlapping calls each resolve when what was queued before them is done', async () => {
    vi.useFakeTimers()
    // The first request takes 1 s to answer, the second 3 s.
    collector(async (_, i) => {
      await delay(i === 0 ? 1000 : 3000)
      return HttpResponse.json({})
    })
    const client = createTestClient({ flushAt: 100 })
    client.track(trackInput(0))
    client.track(trackInput(1))
    const a = watch(client.flush())
    client.track(trackInput(2))
    const b = watch(client.flush())
    const c = watch(client.flush())
    await vi.advanceTimersByTimeAsync(1000)
    expect(a).toMatchObject({ settled: true, value: { delivered: 2, failed: 0 } })
    expect(b.settled).toBe(false)
    expect(c.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(2000)
    expect(b).toMatchObject({ settled: true, value: { delivered: 3, failed: 0 } })
    expect(c).toMatchObject({ settled: true, value: { delivered: 3, failed: 0 } })
  })

  it('waits for batches waiting to retry', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const wire = collector((_, i) => (i < 2 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = createTestClient({ flushAt: 100, minRetryDelay: 1000, maxRetryDelay: 10_000 })
    client.track(trackInput(0))
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(0)
    expect(wire.requests).toHaveLength(1)
    expect(state.settled).toBe(false)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 1, retries: 1 })
    // Delays: 0.5 × 1000, then 0.5 × 2000.
    await vi.advanceTimersByTimeAsync(500)
    expect(wire.requests).toHaveLength(2)
    expect(state.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1000)
    expect(wire.requests).toHaveLength(3)
    expect(state).toMatchObject({ settled: true, value: { delivered: 1, failed: 0 } })
  })

  it('counts a message whose batch was already waiting to retry when flush() was called', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const wire = collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = createTestClient({ flushAt: 1, minRetryDelay: 1000 })
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(10)
    expect(wire.requests).toHaveLength(1)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 1, retries: 1 })
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(500)
    expect(wire.requests).toHaveLength(2)
    expect(state).toMatchObject({ settled: true, value: { delivered: 1, failed: 0 } })
  })

  it('holds the process (one referenced timer) only while it is pending', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = createTestClient({ flushAt: 100, minRetryDelay: 1000 })
    const setInterval = vi.spyOn(globalThis, 'setInterval')
    await client.flush()
    expect(setInterval).not.toHaveBeenCalled()
    client.track(trackInput(0))
    const state = watch(client.flush())
    expect(setInterval).toHaveBeenCalledTimes(1)
    await vi.advanceTimersByTimeAsync(0)
    // Waiting out the retry delay: the delay's timer is unref'd, the hold is not.
    expect(state.settled).toBe(false)
    expect(vi.getTimerCount()).toBe(2)
    await vi.advanceTimersByTimeAsync(500)
    expect(state).toMatchObject({ settled: true, value: { delivered: 1, failed: 0 } })
    expect(vi.getTimerCount()).toBe(0)
  })

  it('covers batches a flushAt trigger already sent', async () => {
    vi.useFakeTimers()
    collector(async () => {
      await delay(2000)
      return HttpResponse.json({})
    })
    const client = createTestClient({ flushAt: 2 })
    client.track(trackInput(0))
    client.track(trackInput(1))
    await vi.advanceTimersByTimeAsync(0)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 2 })
    const state = watch(client.flush())
    await vi.advanceTimersByTimeAsync(1999)
    expect(state.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(state).toMatchObject({ settled: true, value: { delivered: 2, failed: 0 } })
  })
})

describe('close()', () => {
  it('is idempotent: a second call without a bound returns the same promise; one with a bound gives the same result', async () => {
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput())
    const first = client.close()
    const second = client.close(10_000)
    expect(client.close()).toBe(first)
    expect(await first).toEqual({ delivered: 1, failed: 0 })
    expect(await second).toEqual({ delivered: 1, failed: 0 })
    expect(client.close()).toBe(first)
    expect(wire.messages()).toHaveLength(1)
  })

  it('a bounded close() after an unbounded one keeps its bound (a shutdown path after the app began closing)', async () => {
    vi.useFakeTimers()
    collector(async () => {
      await delay('infinite')
      return HttpResponse.json({})
    })
    const client = createTestClient({ timeout: 600_000 })
    const events = listen(client)
    client.track(trackInput())
    const unbounded = watch(client.close())
    const bounded = watch(client.close(1000))
    await vi.advanceTimersByTimeAsync(999)
    expect(bounded.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(bounded).toMatchObject({ settled: true, value: { delivered: 0, failed: 1 } })
    // What was left is aborted for both callers, and reported.
    await vi.advanceTimersByTimeAsync(0)
    expect(unbounded).toMatchObject({ settled: true, value: { delivered: 0, failed: 1 } })
    expect(events.error.map((e) => e.message)).toEqual(['Delivery stopped: close() ran out of time before the batch was delivered.'])
  })

  it('shares one process exit listener among all clients (12 clients: no MaxListenersExceededWarning)', async () => {
    const warnings: unknown[] = []
    const onWarning = (warning: unknown) => warnings.push(warning)
    process.on('warning', onWarning)
    const before = process.listenerCount('beforeExit')
    const clients = Array.from({ length: 12 }, () => createTestClient())
    expect(process.listenerCount('beforeExit')).toBeLessThanOrEqual(Math.max(before, 1))
    await Promise.all(clients.map((client) => client.close()))
    await new Promise((resolve) => setImmediate(resolve))
    process.off('warning', onWarning)
    expect(warnings).toEqual([])
  })

  it('without a bound, waits for retries to finish', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const wire = collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 500 }) : HttpResponse.json({})))
    const client = createTestClient({ minRetryDelay: 10_000, maxRetryDelay: 10_000 })
    client.track(trackInput())
    const state = watch(client.close())
    await vi.advanceTimersByTimeAsync(4999)
    expect(state.settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(2)
    expect(state).toMatchObject({ settled: true, value: { delivered: 1, failed: 0 } })
  })

  it('close(timeoutMs) returns by its bound when the server hangs, reporting what is left as failed', async () => {
    vi.useFakeTimers()
    const wire = collector(async () => {
      await delay('infinite')
      return HttpResponse.json({})
    })
    const client = createTestClient({ timeout: 600_000, flushAt: 2, maxConcurrentRequests: 1 })
    const events = listen(client)
    const sent = [0, 1, 2, 3, 4].map((i) => client.track(trackInput(i)))
    const state = watch(client.close(1000))
    await vi.advanceTimersByTimeAsync(999)
    expect(state.settled).toBe(false)
    expect(wire.requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(state).toMatchObject({ settled: true, rejected: false, value: { delivered: 0, failed: 5 } })
    // The hanging request and the batches still waiting for a connection are all reported.
    const failedIds = events.error.flatMap((e) => e.messages.map((m) => (m as { messageId: string }).messageId))
    expect(failedIds.sort()).toEqual(sent.map((m) => m.messageId).sort())
    for (const error of events.error) {
      expect(error).toBeInstanceOf(AbortedError)
      // The request in flight too says why it was cut, its own abort kept as the cause.
      expect(error.message).toBe('Delivery stopped: close() ran out of time before the batch was delivered.')
    }
    expect(events.error.some((e) => (e as Error).cause instanceof AbortedError)).toBe(true)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 0, delivered: 0, failed: 5 })
  })

  it('close(timeoutMs) cuts short a batch sleeping before its next retry', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.99)
    const wire = collector(() => HttpResponse.json({}, { status: 503 }))
    const client = createTestClient({ minRetryDelay: 30_000, maxRetryDelay: 30_000 })
    const events = listen(client)
    client.track(trackInput())
    const state = watch(client.close(2000))
    await vi.advanceTimersByTimeAsync(2000)
    expect(state).toMatchObject({ settled: true, value: { delivered: 0, failed: 1 } })
    expect(wire.requests).toHaveLength(1)
    expect(events.error).toHaveLength(1)
    expect(events.error[0].code).toBe('ABORTED')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(wire.requests).toHaveLength(1)
  })

  it('close(timeoutMs) returns the delivery result early when the server answers in time', async () => {
    vi.useFakeTimers()
    collector(async () => {
      await delay(100)
      return HttpResponse.json({})
    })
    const client = createTestClient()
    client.track(trackInput())
    const state = watch(client.close(5000))
    await vi.advanceTimersByTimeAsync(100)
    expect(state).toMatchObject({ settled: true, value: { delivered: 1, failed: 0 } })
    expect(vi.getTimerCount()).toBe(0)
  })
})
