/** WebhookDestination retries, on real loopback servers, with the backoff run on fake timers. */
import { describe, expect, it, vi } from 'vitest'
import { HttpError, NetworkError, WEBHOOK_DEFAULTS, WebhookDestination, toWebhookPayload } from '../../src/webhooks/index.js'
import { deliverToEnd, next, settle, useFakeTimers } from './drive.js'
import { useServers } from './servers.js'

const payload = toWebhookPayload({ type: 'identify', userId: 'u-1', traits: { plan: 'pro' }, timestamp: '2026-11-22T10:00:00.000Z' })

const server = useServers()

describe('WebhookDestination retries', () => {
  it('retries 408, 429 and 5xx, then delivers, re-sending identical bytes', async () => {
    useFakeTimers()
    for (const status of [408, 429, 500, 502, 503, 504, 599]) {
      const a = await server({ status: 200 })
      a.replies.push({ status })
      const destination = new WebhookDestination({ urls: [{ url: a.url }], sharedSecret: 's' })
      const retried = next(destination, 'retry')
      const { result } = await deliverToEnd(destination, payload)
      expect(result, String(status)).toMatchObject({ delivered: true, attempts: 2, results: [{ status: 200, attempt: 2 }] })
      expect((await retried).error).toMatchObject({ code: 'HTTP', status })
      expect(a.requests[1].raw.equals(a.requests[0].raw)).toBe(true)
      expect(a.requests[1].headers['x-signature']).toBe(a.requests[0].headers['x-signature'])
    }
  })

  it('retries a timeout: no answer within `timeout` (5 s by default) is a TimeoutError', async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    a.replies.push({ status: 200, hang: true })
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    const retries: Array<{ error: { code: string } }> = []
    destination.on('retry', (info) => retries.push(info))
    const delivered = destination.deliver(payload)
    await a.received(1)
    await vi.advanceTimersByTimeAsync(WEBHOOK_DEFAULTS.timeout - 1)
    await settle()
    expect(retries).toHaveLength(0)
    const retried = next(destination, 'retry')
    await vi.advanceTimersByTimeAsync(1)
    const { error, delayMs } = await retried
    expect(error).toMatchObject({ code: 'TIMEOUT', message: `Request to ${a.url} failed: ETIMEDOUT: no answer within 5000 ms.` })
    await vi.advanceTimersByTimeAsync(delayMs)
    expect(await delivered).toMatchObject({ delivered: true, attempts: 2 })
  })

  it('retries network errors (connection refused)', async () => {
    useFakeTimers()
    const gone = await server()
    await gone.close()
    const destination = new WebhookDestination({ urls: [{ url: gone.url }] })
    const retried = next(destination, 'retry')
    const delivery = destination.deliver(payload)
    expect((await retried).error).toMatchObject({ code: 'NETWORK' })
    await destination.close()
    expect(await delivery).toMatchObject({ delivered: false, attempts: 1, error: { code: 'ABORTED' } })
  })

  it('honours Retry-After in seconds: the next attempt starts no earlier', async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    a.replies.push({ status: 429, headers: { 'Retry-After': '30' } })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], random: () => 0 })
    let attempts = 0
    destination.on('attempt', () => attempts++)
    const retried = next(destination, 'retry')
    const delivery = destination.deliver(payload)
    expect((await retried).delayMs).toBe(30_000)
    await vi.advanceTimersByTimeAsync(29_999)
    await settle()
    expect(attempts).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(await delivery).toMatchObject({ delivered: true, attempts: 2 })
  })

  it('honours Retry-After as an HTTP date, and beyond the jittered backoff', async () => {
    useFakeTimers()
    vi.setSystemTime(Date.UTC(2026, 10, 22, 10, 0, 0))
    const a = await server({ status: 200 })
    a.replies.push({ status: 503, headers: { 'Retry-After': 'Sun, 22 Nov 2026 10:02:00 GMT' } })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], random: () => 0.999 })
    const { result, delays } = await deliverToEnd(destination, payload)
    expect(delays).toEqual([120_000])
    expect(result.delivered).toBe(true)
  })

  it('gives up at once when Retry-After reaches past the retry window', async () => {
    useFakeTimers()
    const a = await server({ status: 503, headers: { 'Retry-After': String(5 * 3600) } })
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    const { result, delays } = await deliverToEnd(destination, payload)
    expect(delays).toEqual([])
    expect(result).toMatchObject({ delivered: false, attempts: 1, error: { status: 503 } })
    expect(result.error!.message).toBe(
      `${a.url} answered 503 (Retry-After: 18000000 ms); no retry: its Retry-After reaches past the retry window (4 hours from the first attempt).`,
    )
  })

  it('backs off exponentially with full jitter, capped', async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    for (let i = 0; i < 12; i++) a.replies.push({ status: 500 })
    const randoms = [0.999, 0.5]
    for (const r of randoms) {
      const destination = new WebhookDestination({ urls: [{ url: a.url }], random: () => r })
      const { delays } = await deliverToEnd(destination, payload)
      const { baseMs, capMs } = WEBHOOK_DEFAULTS.backoff
      expect(delays).toEqual(delays.map((_, i) => Math.floor(r * Math.min(capMs, baseMs * 2 ** i))))
      for (let i = 0; i < 12; i++) a.replies.push({ status: 500 })
    }
  })

  it('stops retrying 4 hours after the first attempt (default window) and reports the failure', async () => {
    useFakeTimers()
    const a = await server({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], random: () => 0.999 })
    const started: number[] = []
    destination.on('attempt', () => started.push(Date.now()))
    const failed = next(destination, 'failed')
    const { result } = await deliverToEnd(destination, payload)
    const elapsed = started.map((t) => t - started[0])
    const lastDelay = Math.floor(0.999 * WEBHOOK_DEFAULTS.backoff.capMs)
    expect(elapsed.at(-1)).toBeLessThanOrEqual(14_400_000)
    expect(elapsed.at(-1)! + lastDelay).toBeGreaterThan(14_400_000)
    expect(result).toMatchObject({ delivered: false, attempts: started.length, error: { code: 'HTTP', status: 503 } })
    expect(a.requests).toHaveLength(started.length)
    expect(await failed).toMatchObject({ attempts: started.length })
  })

  it('when the window ends the retrying, the final error says so, of the same class and code, the last attempt\'s error its cause', async () => {
    useFakeTimers()
    const a = await server({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], random: () => 0.999 })
    const failed = next(destination, 'failed')
    const { result } = await deliverToEnd(destination, payload)
    const { error } = result
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ name: 'HttpError', code: 'HTTP', status: 503 })
    expect(error!.message).toBe(`${a.url} answered 503; no retry: the next would start past the retry window (4 hours from the first attempt).`)
    expect(error!.cause).toMatchObject({ name: 'HttpError', status: 503, message: `${a.url} answered 503.` })
    expect(error!.stack).toMatch(/^HttpError: .* answered 503; no retry: /)
    expect((await failed).error).toBe(error)

    // Another class and window: a refused connection, retried for 90 s.
    const gone = await server()
    await gone.close()
    const short = await deliverToEnd(new WebhookDestination({ urls: [{ url: gone.url }], retryWindow: 90_000, random: () => 0.999 }), payload)
    expect(short.result.error).toBeInstanceOf(NetworkError)
    expect(short.result.error).toMatchObject({ code: 'NETWORK', cause: { code: 'NETWORK' } })
    expect(short.result.error!.message).toMatch(/ECONNREFUSED .*; no retry: the next would start past the retry window \(90 seconds from the first attempt\)\.$/)
  })

  it('with retryWindow 0, does not retry', async () => {
    const a = await server({ status: 503 })
    const result = await new WebhookDestination({ urls: [{ url: a.url }], retryWindow: 0 }).deliver(payload)
    expect(result).toMatchObject({ delivered: false, attempts: 1 })
  })

  it('mixed answers (400 and 503): retries, but only to the URL whose failure is retryable', async () => {
    useFakeTimers()
    const bad = await server({ status: 400 })
    const busy = await server({ status: 200 })
    busy.replies.push({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: bad.url }, { url: busy.url }] })
    const urlsPerAttempt: string[][] = []
    destination.on('attempt', ({ urls }) => urlsPerAttempt.push(urls))
    const { result } = await deliverToEnd(destination, payload)
    expect(urlsPerAttempt).toEqual([[bad.url, busy.url], [busy.url]])
    expect(result).toMatchObject({
      delivered: true,
      attempts: 2,
      results: [
        { url: bad.url, attempt: 1, status: 400 },
        { url: busy.url, attempt: 2, status: 200 },
      ],
    })
    expect(bad.requests).toHaveLength(1)
  })

  it('waits for the longest Retry-After among the URLs', async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    a.replies.push({ status: 429, headers: { 'Retry-After': '60' } })
    const b = await server({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: b.url }, { url: a.url }], random: () => 0 })
    const { delays, result } = await deliverToEnd(destination, payload)
    expect(delays).toEqual([60_000])
    expect(result.delivered).toBe(true)
  })
})

describe('WebhookDestination close()', () => {
  it('stops pending retries: deliver() resolves delivered:false with an AbortedError, nothing more is sent', async () => {
    useFakeTimers()
    const a = await server({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    const retried = next(destination, 'retry')
    const failed = next(destination, 'failed')
    const delivery = destination.deliver(payload)
    await retried
    expect(destination.pendingCount).toBe(1)
    await destination.close()
    const result = await delivery
    expect(result).toMatchObject({ delivered: false, attempts: 1, error: { code: 'ABORTED', cause: { status: 503 } } })
    expect((await failed).error.code).toBe('ABORTED')
    expect(destination.pendingCount).toBe(0)
    await vi.advanceTimersByTimeAsync(14_400_000)
    expect(a.requests).toHaveLength(1)
    await destination.close()
  })

  it('lets an attempt already on the wire finish: a success is still delivered, a failure is not retried', async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const ok = await server({ status: 200, waitFor: () => gate })
    const busy = await server({ status: 503, waitFor: () => gate })
    const d1 = new WebhookDestination({ urls: [{ url: ok.url }] })
    const d2 = new WebhookDestination({ urls: [{ url: busy.url }] })
    const deliveries = [d1.deliver(payload), d2.deliver(payload)]
    await Promise.all([ok.received(1), busy.received(1)])
    const closed = Promise.all([d1.close(), d2.close()])
    release()
    await closed
    const [r1, r2] = await Promise.all(deliveries)
    expect(r1).toMatchObject({ delivered: true, attempts: 1 })
    expect(r2).toMatchObject({ delivered: false, attempts: 1, error: { code: 'ABORTED' } })
  })

  it('deliver() after close() resolves with a ClientClosedError and sends nothing', async () => {
    const a = await server()
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    await destination.close()
    const result = await destination.deliver(payload)
    expect(result).toMatchObject({ delivered: false, attempts: 0, error: { code: 'CLIENT_CLOSED' }, results: [{ url: a.url, attempt: 0 }] })
    expect(a.requests).toHaveLength(0)
  })
})
