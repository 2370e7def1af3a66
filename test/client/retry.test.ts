import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { HttpError, NetworkError, TimeoutError } from '../../src/index.js'
import { collector, createTestClient, ENDPOINT, http, HttpResponse, installServer, listen, server, settle, trackInput, type Responder } from '../helpers/client.js'

installServer()

const NOW = new Date('2026-11-22T10:00:00.000Z')

/** A collector that answers with `answers[i]` (the last one repeats) and records when each request came. */
function scripted(...answers: Array<Responder>) {
  const times: number[] = []
  const wire = collector((req, i) => {
    times.push(Date.now())
    return answers[Math.min(i, answers.length - 1)](req, i)
  })
  return { wire, times }
}
const status = (code: number, headers?: Record<string, string>): Responder => () => new HttpResponse(null, { status: code, headers })
const ok = status(200)

describe('retried answers', () => {
  it.each([500, 502, 503, 504, 599, 408, 429])('%i is retried, then delivered', async (code) => {
    vi.useFakeTimers()
    const { wire } = scripted(status(code), ok)
    const client = createTestClient()
    const events = listen(client)
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 1, failed: 0 })
    expect(wire.requests).toHaveLength(2)
    expect(events.retry).toHaveLength(1)
    expect((events.retry[0].error as HttpError).status).toBe(code)
    expect(client.stats()).toMatchObject({ delivered: 1, retries: 1, failed: 0 })
  })

  it('a network error is retried', async () => {
    vi.useFakeTimers()
    const { wire } = scripted(() => HttpResponse.error(), () => HttpResponse.error(), ok)
    const client = createTestClient()
    const events = listen(client)
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 1, failed: 0 })
    expect(wire.requests).toHaveLength(3)
    expect(events.retry.map((r) => r.error)).toEqual([expect.any(NetworkError), expect.any(NetworkError)])
  })

  it('an attempt with no answer within `timeout` is aborted and retried', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const { wire, times } = scripted(async () => {
      await delay('infinite')
      return new HttpResponse(null, { status: 200 })
    }, ok)
    const client = createTestClient({ timeout: 2000 })
    const events = listen(client)
    client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(1999)
    expect(wire.requests).toHaveLength(1)
    expect(events.retry).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(events.retry).toHaveLength(1)
    expect(events.retry[0].error).toBeInstanceOf(TimeoutError)
    expect(events.retry[0].error.message).toContain('2000')
    expect(await settle(result, 1000, 1)).toEqual({ delivered: 1, failed: 0 })
    // The retry's zero delay is a 0 ms timer, which fake timers run 1 ms later.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(2000)
    expect(times[1] - times[0]).toBeLessThanOrEqual(2001)
  })

  it('the default timeout is 10,000 ms', async () => {
    vi.useFakeTimers()
    scripted(async () => {
      await delay('infinite')
      return new HttpResponse(null, { status: 200 })
    })
    const client = createTestClient()
    const events = listen(client)
    client.track(trackInput())
    void client.flush()
    await vi.advanceTimersByTimeAsync(9999)
    expect(events.retry).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(1)
    expect(events.retry).toHaveLength(1)
    expect(events.retry[0].error.code).toBe('TIMEOUT')
  })
})

describe('Retry-After', () => {
  // Retry-After in seconds, and as an HTTP date (7 s after NOW).
  it.each([
    ['seconds', (): string => '3', 3000],
    ['an HTTP date', (): string => new Date(NOW.getTime() + 7000).toUTCString(), 7000],
  ] as const)('429 with Retry-After as %s: the next attempt is not sent before that delay', async (_, header, waitMs) => {
    vi.useFakeTimers({ now: NOW })
    const { wire, times } = scripted(status(429, { 'Retry-After': header() }), ok)
    const client = createTestClient({ minRetryDelay: 10, maxRetryDelay: 50 })
    client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(waitMs - 1)
    expect(wire.requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(wire.requests).toHaveLength(2)
    expect(times[1] - times[0]).toBe(waitMs)
    expect(await result).toEqual({ delivered: 1, failed: 0 })
  })

  it('503 with Retry-After is honoured too', async () => {
    vi.useFakeTimers({ now: NOW })
    const { times } = scripted(status(503, { 'Retry-After': '2' }), ok)
    const client = createTestClient({ minRetryDelay: 10, maxRetryDelay: 50 })
    client.track(trackInput())
    expect(await settle(client.flush(), 10_000, 10)).toEqual({ delivered: 1, failed: 0 })
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(2000)
  })

  it('a longer jittered backoff wins over a short Retry-After', async () => {
    vi.useFakeTimers({ now: NOW })
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const { times } = scripted(status(429, { 'Retry-After': '1' }), ok)
    const client = createTestClient({ minRetryDelay: 8000, maxRetryDelay: 8000 })
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 1, failed: 0 })
    expect(times[1] - times[0]).toBe(4000)
  })

  it('a huge Retry-After is capped at 5 minutes', async () => {
    vi.useFakeTimers({ now: NOW })
    const { times } = scripted(status(429, { 'Retry-After': '86400' }), ok)
    const client = createTestClient({ minRetryDelay: 10, maxRetryDelay: 50 })
    client.track(trackInput())
    expect(await settle(client.flush(), 400_000, 1000)).toEqual({ delivered: 1, failed: 0 })
    expect(times[1] - times[0]).toBe(300_000)
  })
})

describe('backoff', () => {
  it('is exponential with full jitter, capped by maxRetryDelay', async () => {
    vi.useFakeTimers({ now: NOW })
    vi.spyOn(Math, 'random').mockReturnValue(0.999)
    const { times } = scripted(status(500))
    const client = createTestClient({ maxRetries: 5, minRetryDelay: 100, maxRetryDelay: 500 })
    listen(client)
    client.track(trackInput())
    expect(await settle(client.flush(), 10_000, 1)).toEqual({ delivered: 0, failed: 1 })
    const gaps = times.slice(1).map((t, i) => t - times[i])
    // floor(0.999 × min(500, 100 × 2^(n-1)))
    expect(gaps).toEqual([99, 199, 399, 499, 499])
  })

  it('random 0 retries at once', async () => {
    vi.useFakeTimers({ now: NOW })
    vi.spyOn(Math, 'random').mockReturnValue(0)
    const { times } = scripted(status(500), status(500), ok)
    const client = createTestClient()
    client.track(trackInput())
    expect(await settle(client.flush(), 100, 1)).toEqual({ delivered: 1, failed: 0 })
    // A zero delay (fake timers run a 0 ms timer up to 1 ms later).
    expect(times[1] - times[0]).toBeLessThanOrEqual(1)
    expect(times[2] - times[1]).toBeLessThanOrEqual(1)
  })
})

describe('final answers', () => {
  it.each([400, 401, 403, 404, 409, 410, 422, 413])('%i fails at once, with no retry', async (code) => {
    vi.useFakeTimers()
    const { wire } = scripted(status(code))
    const client = createTestClient()
    const events = listen(client)
    const sent = client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(1)
    expect(events.retry).toHaveLength(0)
    expect(events.error).toHaveLength(1)
    expect(events.error[0].status).toBe(code)
    expect(events.error[0].messages).toEqual([sent])
    expect(client.stats()).toMatchObject({ failed: 1, retries: 0 })
  })

  it.each([301, 302, 303, 307, 308])('%i is not followed and fails at once', async (code) => {
    vi.useFakeTimers()
    let followed = 0
    server.use(http.all(`${ENDPOINT}/elsewhere`, () => {
      followed++
      return HttpResponse.json({})
    }))
    const { wire } = scripted(status(code, { Location: `${ENDPOINT}/elsewhere` }))
    const client = createTestClient()
    const events = listen(client)
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(1)
    expect(followed).toBe(0)
    expect(events.error[0].status).toBe(code)
  })
})

describe('maxRetries', () => {
  it.each([0, 1, 3])('maxRetries %i makes exactly maxRetries + 1 attempts', async (maxRetries) => {
    vi.useFakeTimers()
    const { wire } = scripted(status(503))
    const client = createTestClient({ maxRetries })
    const events = listen(client)
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(maxRetries + 1)
    expect(events.retry).toHaveLength(maxRetries)
    expect(events.error).toHaveLength(1)
    expect(events.error[0].status).toBe(503)
    expect(client.stats().retries).toBe(maxRetries)
  })

  it('defaults to 10 retries (11 attempts), then reports the batch failed', async () => {
    vi.useFakeTimers()
    const { wire } = scripted(() => HttpResponse.error())
    const client = createTestClient()
    const events = listen(client)
    const sent = client.track(trackInput())
    expect(await settle(client.flush(), 600_000, 1000)).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(11)
    expect(events.error).toHaveLength(1)
    expect(events.error[0]).toBeInstanceOf(NetworkError)
    expect(events.error[0].messages).toEqual([sent])
  })
})

describe('byte-identical retries', () => {
  it('re-sends the same body, same sentAt, as time passes', async () => {
    vi.useFakeTimers({ now: NOW })
    const { wire, times } = scripted(status(500), () => HttpResponse.error(), status(429, { 'Retry-After': '2' }), ok)
    const client = createTestClient({ minRetryDelay: 1000 })
    client.track(trackInput(0, { properties: { text: 'héllo 😀' } }))
    client.track(trackInput(1))
    expect(await settle(client.flush())).toEqual({ delivered: 2, failed: 0 })
    expect(wire.requests).toHaveLength(4)
    expect(times[3]).toBeGreaterThan(times[0])
    const first = wire.requests[0]
    for (const r of wire.requests) {
      expect(Buffer.from(r.bytes).equals(Buffer.from(first.bytes))).toBe(true)
      expect(r.body.sentAt).toBe(first.body.sentAt)
      expect(r.headers.get('authorization')).toBe(first.headers.get('authorization'))
    }
  })
})
