import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { AnalyticsError, HttpError, NetworkError, isHttpError } from '../../src/index.js'
import { collector, createTestClient, HttpResponse, installServer, listen, settle, trackInput } from '../helpers/client.js'

installServer()

describe("'flush' event", () => {
  it('fires per delivered batch with {messages, status}', async () => {
    collector(() => HttpResponse.json({}, { status: 202 }))
    const client = createTestClient({ flushAt: 2 })
    const events = listen(client)
    const a = client.track(trackInput(0))
    const b = client.track(trackInput(1))
    const c = client.track(trackInput(2))
    await client.flush()
    expect(events.flush).toHaveLength(2)
    expect(events.flush[0]).toEqual({ messages: [a, b], status: 202 })
    expect(events.flush[1]).toEqual({ messages: [c], status: 202 })
  })
})

describe("'flush' and 'retry' events read later", () => {
  it('carry the messages they were emitted with, though later messages reuse their memory (Node: held as bytes)', async () => {
    vi.useFakeTimers()
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = createTestClient({ flushAt: 1 })
    const events = listen(client)
    // Same lengths, other texts: a message read from reused memory would parse, as the wrong one.
    const first = client.track(trackInput(1))
    await settle(client.flush())
    const second = client.track(trackInput(2))
    await settle(client.flush())
    const third = client.track(trackInput(3))
    await settle(client.flush())
    // Read only now, after every batch settled and the next ones were queued over them.
    expect(events.retry.map((e) => e.messages)).toEqual([[first]])
    expect(events.flush.map((e) => e.messages)).toEqual([[first], [second], [third]])
  })
})

describe("'retry' event", () => {
  it('fires per failed attempt that will be retried, with {messages, attempt, error}', async () => {
    vi.useFakeTimers()
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : i === 1 ? HttpResponse.error() : HttpResponse.json({})))
    const client = createTestClient()
    const events = listen(client)
    const sent = client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await result).toEqual({ delivered: 1, failed: 0 })
    expect(events.retry).toHaveLength(2)
    expect(events.retry[0]).toMatchObject({ messages: [sent], attempt: 1 })
    expect(events.retry[0].error).toBeInstanceOf(HttpError)
    expect((events.retry[0].error as HttpError).status).toBe(503)
    expect(events.retry[1]).toMatchObject({ messages: [sent], attempt: 2 })
    expect(events.retry[1].error).toBeInstanceOf(NetworkError)
    expect(events.error).toHaveLength(0)
    expect(events.flush).toHaveLength(1)
  })

  it('does not fire for the last attempt, which is final', async () => {
    vi.useFakeTimers()
    collector(() => HttpResponse.json({}, { status: 500 }))
    const client = createTestClient({ maxRetries: 2 })
    const events = listen(client)
    client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(await result).toEqual({ delivered: 0, failed: 1 })
    expect(events.retry.map((e) => e.attempt)).toEqual([1, 2])
    expect(events.error).toHaveLength(1)
  })
})

describe("'error' event", () => {
  it('carries the failed messages and the HTTP status', async () => {
    collector(() => HttpResponse.json({ error: 'bad' }, { status: 400 }))
    const client = createTestClient()
    const events = listen(client)
    const sent = [client.track(trackInput(0)), client.track(trackInput(1))]
    expect(await client.flush()).toEqual({ delivered: 0, failed: 2 })
    expect(events.error).toHaveLength(1)
    const [error] = events.error
    expect(error).toBeInstanceOf(AnalyticsError)
    expect(isHttpError(error)).toBe(true)
    expect(error.status).toBe(400)
    expect(error.code).toBe('HTTP')
    expect(error.messages).toEqual(sent)
  })

  it('off() removes a listener', async () => {
    collector(() => HttpResponse.json({}, { status: 400 }))
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const client = createTestClient()
    const listener = vi.fn()
    expect(client.on('error', listener)).toBe(client)
    expect(client.off('error', listener)).toBe(client)
    client.track(trackInput())
    await client.flush()
    expect(listener).not.toHaveBeenCalled()
  })

  it('without a listener, errors are logged with console.error and never thrown', async () => {
    vi.useFakeTimers()
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    collector(() => HttpResponse.json({}, { status: 401 }))
    const client = createTestClient({ maxQueueSize: 1, flushAt: 10 })
    client.track(trackInput(0))
    expect(() => client.track(trackInput(1))).not.toThrow() // dropped: queue full
    await vi.advanceTimersByTimeAsync(0)
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await result).toEqual({ delivered: 0, failed: 1 })
    const lines = consoleError.mock.calls.map((c) => c.map(String).join(' '))
    expect(lines).toHaveLength(2)
    expect(lines.some((l) => l.includes('isomorphic-analytics') && l.includes('Queue is full'))).toBe(true)
    expect(lines.some((l) => l.includes('isomorphic-analytics') && l.includes('401'))).toBe(true)
  })
})

describe('stats()', () => {
  it('counts queued, inFlight, delivered, failed, dropped and retries', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0)
    // Request 1: 500 then 200 after 1 s; request 2 (and its retry): 400.
    collector(async (req, i) => {
      if (i === 0) return HttpResponse.json({}, { status: 500 })
      if (req.body.batch[0].userId === 'user-0') {
        await delay(1000)
        return HttpResponse.json({})
      }
      return HttpResponse.json({}, { status: 400 })
    })
    const client = createTestClient({ flushAt: 100, maxQueueSize: 4, maxConcurrentRequests: 1 })
    listen(client)
    expect(client.stats()).toEqual({ queued: 0, inFlight: 0, delivered: 0, failed: 0, dropped: 0, retries: 0 })
    client.track(trackInput(0))
    client.track(trackInput(1))
    client.track(trackInput(2))
    expect(client.stats()).toEqual({ queued: 3, inFlight: 0, delivered: 0, failed: 0, dropped: 0, retries: 0 })
    const first = client.flush()
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 3 })
    client.track(trackInput(3))
    client.track(trackInput(4)) // dropped: 3 in flight + 1 queued = 4
    expect(client.stats()).toEqual({ queued: 1, inFlight: 3, delivered: 0, failed: 0, dropped: 1, retries: 0 })
    await vi.advanceTimersByTimeAsync(0)
    expect(client.stats()).toMatchObject({ inFlight: 3, retries: 1 })
    await vi.advanceTimersByTimeAsync(1000)
    expect(await first).toEqual({ delivered: 3, failed: 0 })
    expect(client.stats()).toEqual({ queued: 1, inFlight: 0, delivered: 3, failed: 0, dropped: 1, retries: 1 })
    const second = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await second).toEqual({ delivered: 0, failed: 1 })
    expect(client.stats()).toEqual({ queued: 0, inFlight: 0, delivered: 3, failed: 1, dropped: 1, retries: 1 })
  })

  it('returns a snapshot, not a live object', () => {
    const client = createTestClient()
    const snapshot = client.stats()
    client.track(trackInput())
    expect(snapshot.queued).toBe(0)
    snapshot.delivered = 99
    expect(client.stats().delivered).toBe(0)
  })
})
