/** WebhookDestination against real loopback HTTP servers: requests, headers, signature, outcome. */
import { createHmac } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import {
  WEBHOOK_USER_AGENT,
  WebhookDestination,
  toWebhookPayload,
  verifySignature,
  type WebhookDestinationEvents,
} from '../../src/webhooks/index.js'
import { deliverToEnd, next, settle, useFakeTimers } from './drive.js'
import { useServers } from './servers.js'

const SECRET = 'shh-🔑-secret'
const payload = toWebhookPayload({
  type: 'track',
  event: 'Order Completed',
  userId: 'user-1',
  messageId: 'm-1',
  properties: { total: 12.5, currency: 'EUR', note: 'Grüße 😀 "quoted" \u2028' },
  timestamp: '2026-11-22T10:00:00.000Z',
})

const server = useServers()

describe('WebhookDestination delivery', () => {
  it('POSTs to every URL in parallel with the fixed headers, static headers and a signature of the raw body', async () => {
    const b = await server({ status: 500 })
    // `a` answers only once `b` has received its request: sequential sending would never get there.
    const a = await server({ status: 200, waitFor: () => b.received(1) })
    const destination = new WebhookDestination({
      urls: [
        { url: a.url, headers: { Authorization: 'Bearer token-a', 'X-Tenant': 'acme' } },
        { url: b.url + '?src=web', headers: { 'x-other': 'b' } },
      ],
      sharedSecret: SECRET,
    })
    const result = await destination.deliver(payload)
    expect(result).toStrictEqual({
      delivered: true,
      attempts: 1,
      results: [
        { url: a.url, attempt: 1, status: 200, durationMs: expect.any(Number) },
        { url: b.url + '?src=web', attempt: 1, status: 500, error: expect.objectContaining({ code: 'HTTP', status: 500 }), durationMs: expect.any(Number) },
      ],
    })
    const [ra] = a.requests
    const [rb] = b.requests
    expect(ra.method).toBe('POST')
    expect(rb.path).toBe('/hook?src=web')
    for (const request of [ra, rb]) {
      expect(request.headers['user-agent']).toBe(WEBHOOK_USER_AGENT)
      expect(request.headers['user-agent']).toMatch(/^[A-Za-z][\w.-]*\/1\.0$/)
      expect(request.headers['content-type']).toBe('application/json')
      // The signature is checked against the bytes the server received, with node:crypto.
      expect(request.headers['x-signature']).toBe(createHmac('sha1', SECRET).update(request.raw).digest('hex'))
      expect(await verifySignature(request.raw, request.headers['x-signature'] as string, SECRET)).toBe(true)
      expect(request.raw.toString('utf8')).toBe(JSON.stringify(payload))
    }
    expect(ra.headers.authorization).toBe('Bearer token-a')
    expect(ra.headers['x-tenant']).toBe('acme')
    expect(ra.headers['x-other']).toBeUndefined()
    expect(rb.headers['x-other']).toBe('b')
    expect(rb.headers.authorization).toBeUndefined()
  })

  it('sends no X-Signature without a shared secret', async () => {
    const a = await server()
    await new WebhookDestination({ urls: [{ url: a.url }] }).deliver(payload)
    expect(a.requests[0].headers).not.toHaveProperty('x-signature')
  })

  it('serialises the payload once per delivery, however many URLs and attempts', async () => {
    const a = await server({ status: 200 })
    a.replies.push({ status: 503 })
    const b = await server({ status: 503 })
    let serialisations = 0
    const counted = { ...payload, toJSON() { serialisations++; return payload } }
    useFakeTimers()
    const destination = new WebhookDestination({ urls: [{ url: a.url }, { url: b.url }], sharedSecret: SECRET })
    const { result } = await deliverToEnd(destination, counted)
    expect(result).toMatchObject({ delivered: true, attempts: 2 })
    expect(serialisations).toBe(1)
    const bodies = [...a.requests, ...b.requests].map((r) => r.raw.toString('utf8'))
    expect(new Set(bodies)).toEqual(new Set([JSON.stringify(payload)]))
    const signatures = [...a.requests, ...b.requests].map((r) => r.headers['x-signature'])
    expect(new Set(signatures).size).toBe(1)
  })

  it('resolves as soon as one URL answers 2xx, without waiting for a slower URL, and never retries the others', async () => {
    useFakeTimers()
    const fast = await server({ status: 202 })
    const slow = await server({ status: 503, hang: true })
    const destination = new WebhookDestination({ urls: [{ url: slow.url }, { url: fast.url }] })
    const retries: unknown[] = []
    destination.on('retry', (info) => retries.push(info))
    const delivered = next(destination, 'delivered')
    const result = await destination.deliver(payload)
    expect(result.delivered).toBe(true)
    expect(result.results).toStrictEqual([
      { url: slow.url, attempt: 1, pending: true },
      { url: fast.url, attempt: 1, status: 202, durationMs: expect.any(Number) },
    ])
    expect(await delivered).toMatchObject({ url: fast.url, status: 202, attempt: 1 })
    expect(slow.requests).toHaveLength(1)
    // Hours pass: the slow request times out in the background and nothing is retried.
    await vi.advanceTimersByTimeAsync(5 * 3_600_000)
    await settle()
    expect(slow.requests).toHaveLength(1)
    expect(fast.requests).toHaveLength(1)
    expect(retries).toEqual([])
  })

  it('fails at once, without retry, when every URL answers a final status (4xx, 3xx)', async () => {
    for (const status of [400, 401, 403, 404, 410, 413, 422]) {
      const a = await server({ status })
      const destination = new WebhookDestination({ urls: [{ url: a.url }] })
      const retries: unknown[] = []
      destination.on('retry', (info) => retries.push(info))
      const result = await destination.deliver(payload)
      expect(result, String(status)).toMatchObject({ delivered: false, attempts: 1, error: { code: 'HTTP', status } })
      expect(result.results).toEqual([{ url: a.url, attempt: 1, status, error: result.error, durationMs: expect.any(Number) }])
      expect(retries).toEqual([])
      expect(a.requests).toHaveLength(1)
    }
  })

  it('does not follow redirects: a 3xx fails at once and the Location is never requested', async () => {
    const target = await server({ status: 200 })
    for (const status of [301, 302, 307, 308]) {
      const a = await server({ status, headers: { Location: target.url } })
      const result = await new WebhookDestination({ urls: [{ url: a.url }] }).deliver(payload)
      expect(result, String(status)).toMatchObject({ delivered: false, attempts: 1, error: { code: 'HTTP', status } })
      expect(result.error!.message).toMatch(/redirects are not followed/)
    }
    expect(target.requests).toHaveLength(0)
  })

  it("reports every outcome through events, with URL, status and attempt number", async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    a.replies.push({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], backoff: { baseMs: 5, capMs: 5 }, random: () => 0.5 })
    const events: Array<[keyof WebhookDestinationEvents, unknown]> = []
    for (const name of ['attempt', 'retry', 'delivered', 'failed'] as const) {
      destination.on(name, (info) => events.push([name, info]))
    }
    const thrown = new Error('a throwing listener does not break delivery')
    destination.on('attempt', () => {
      throw thrown
    })
    // …and is reported: it was swallowed without a word.
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    await deliverToEnd(destination, payload)
    expect(consoleError).toHaveBeenCalledWith("isomorphic-analytics: a 'attempt' listener threw:", thrown)
    consoleError.mockRestore()
    expect(events).toEqual([
      ['attempt', { payload, attempt: 1, urls: [a.url] }],
      ['retry', { payload, attempt: 1, delayMs: 2, results: [{ url: a.url, attempt: 1, status: 503, error: expect.objectContaining({ status: 503 }), durationMs: expect.any(Number) }], error: expect.objectContaining({ code: 'HTTP', status: 503 }) }],
      ['attempt', { payload, attempt: 2, urls: [a.url] }],
      ['delivered', { payload, attempt: 2, url: a.url, status: 200, results: [{ url: a.url, attempt: 2, status: 200, durationMs: expect.any(Number) }] }],
    ])
    const b = await server({ status: 404 })
    const d2 = new WebhookDestination({ urls: [{ url: b.url }] })
    const onFailed = next(d2, 'failed')
    await d2.deliver(payload)
    expect(await onFailed).toMatchObject({ attempts: 1, results: [{ url: b.url, status: 404, attempt: 1 }], error: { status: 404 } })
  })

  it('uses the injected fetch', async () => {
    const a = await server()
    const fetch = vi.fn((input: string, init?: RequestInit) => globalThis.fetch(input, init))
    await new WebhookDestination({ urls: [{ url: a.url }], fetch }).deliver(payload)
    expect(fetch).toHaveBeenCalledTimes(1)
    expect(fetch.mock.calls[0][1]).toMatchObject({ method: 'POST', redirect: 'manual' })
  })

  it('with a fetch, a 200 whose body never ends is delivered at once; its body is read and dropped, and cut off once `timeout` has passed', async () => {
    // 64 KiB every 5 ms for as long as the connection is open.
    let written = 0
    let closedAfterMs: number | undefined
    const endless = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' })
        const started = Date.now()
        const chunk = Buffer.alloc(65_536, 'x')
        const timer = setInterval(() => res.write(chunk, () => (written += chunk.length)), 5)
        res.on('close', () => {
          clearInterval(timer)
          closedAfterMs = Date.now() - started
        })
      })
    })
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hook`
      const destination = new WebhookDestination({ urls: [{ url }], timeout: 300, fetch: globalThis.fetch })
      expect(await destination.deliver(payload)).toMatchObject({ delivered: true, attempts: 1, results: [{ url, status: 200 }] })
      const deadline = Date.now() + 3_000
      while (closedAfterMs === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(closedAfterMs, 'the answer was never cut off').toBeDefined()
      expect(closedAfterMs).toBeLessThan(300 + 700)
      // It was read meanwhile, not left waiting.
      expect(written).toBeGreaterThan(16_384)
      await destination.close()
    } finally {
      endless.closeAllConnections()
      await new Promise((resolve) => endless.close(resolve))
    }
  })

  it('resolves (never rejects) with a ValidationError for a payload that cannot be serialised; nothing is sent', async () => {
    const a = await server()
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    const circular: Record<string, unknown> = { type: 'track' }
    circular.self = circular
    for (const bad of [circular, { type: 'track', n: 10n }, null, undefined, 'str', 5, [payload]]) {
      const result = await destination.deliver(bad as object)
      expect(result, String(bad)).toMatchObject({ delivered: false, attempts: 0, error: { code: 'VALIDATION', field: 'payload' } })
    }
    expect((await destination.deliver(null as unknown as object)).error!.message).toBe('Expected the payload to be an object (a webhook payload), got `null`.')
    expect(a.requests).toHaveLength(0)
  })

  it('deliverSerialized resolves (never rejects) with a ValidationError naming body for a body that is not a string; nothing is sent, close() resolves', async () => {
    const a = await server()
    for (const sharedSecret of [SECRET, undefined]) {
      const destination = new WebhookDestination({ urls: [{ url: a.url }], sharedSecret, retryWindow: 100, backoff: { baseMs: 10, capMs: 10 } })
      const failed = vi.fn()
      destination.on('failed', failed)
      for (const body of [payload, 123, undefined, null, new TextEncoder().encode('{"a":1}')]) {
        const result = await destination.deliverSerialized(body as unknown as string)
        expect(result, `${String(sharedSecret)} ${String(body)}`).toMatchObject({ delivered: false, attempts: 0, error: { code: 'VALIDATION', field: 'body' } })
        expect(result.results).toEqual([{ url: a.url, attempt: 0, error: result.error }])
      }
      expect((await destination.deliverSerialized(undefined as unknown as string)).error!.message).toBe(
        "Expected `body` to be the payload's JSON text (a string), got `undefined`.",
      )
      expect(failed).toHaveBeenCalledTimes(6)
      expect(destination.pendingCount).toBe(0)
      await expect(destination.close()).resolves.toBeUndefined()
    }
    expect(a.requests).toHaveLength(0)
  })

  it('a delivery that rejects (a `now` that throws) is no unhandled rejection: pendingCount drops and close() resolves', async () => {
    const a = await server()
    const destination = new WebhookDestination({ urls: [{ url: a.url }], now: () => { throw new Error('clock broken') } })
    await expect(destination.deliverSerialized('{}')).rejects.toThrow('clock broken')
    // Let a leaked rejection surface: vitest fails the run on one.
    await settle()
    expect(destination.pendingCount).toBe(0)
    await expect(destination.close()).resolves.toBeUndefined()
    await expect(destination.close()).resolves.toBeUndefined()
  })

  it('DEBUG=analytics:webhooks logs each attempt and the outcome, with the real URL and counts in words', async () => {
    const a = await server({ status: 200 })
    vi.stubEnv('DEBUG', 'analytics:webhooks')
    const lines: string[] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    try {
      await new WebhookDestination({ urls: [{ url: a.url }], sharedSecret: SECRET }).deliver(payload)
    } finally {
      spy.mockRestore()
      vi.unstubAllEnvs()
    }
    expect(lines.map((l) => l.replace(/ \+\d+ms$/, ''))).toEqual([
      `analytics:webhooks attempt 1: POST to ${a.url}`,
      `analytics:webhooks delivered to ${a.url} (200) after 1 attempt`,
    ])
    expect(lines.join('\n')).not.toContain(SECRET)
  })

  it('DEBUG lines mask a credential in the URL', async () => {
    const a = await server({ status: 200 })
    const url = `${a.url}?token=hook_0123456789`
    vi.stubEnv('DEBUG', 'analytics:webhooks')
    const lines: string[] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    try {
      await new WebhookDestination({ urls: [{ url }] }).deliver(payload)
    } finally {
      spy.mockRestore()
      vi.unstubAllEnvs()
    }
    expect(lines.map((l) => l.replace(/ \+\d+ms$/, ''))).toEqual([
      `analytics:webhooks attempt 1: POST to ${a.url}?token=…6789`,
      `analytics:webhooks delivered to ${a.url}?token=…6789 (200) after 1 attempt`,
    ])
  })

  it("errors name a webhook URL with its credential masked (refused: 403; nothing listening: ECONNREFUSED)", async () => {
    const a = await server({ status: 403, body: JSON.stringify({ message: 'Forbidden' }), headers: { 'content-type': 'application/json' } })
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    for (const [base, expected] of [
      [a.url, `${a.url}?token=…6789 answered 403: Forbidden`],
      [`http://127.0.0.1:${port}/in`, `Request to http://127.0.0.1:${port}/in?token=…6789 failed: connect ECONNREFUSED 127.0.0.1:${port}`],
    ]) {
      const result = await new WebhookDestination({ urls: [{ url: `${base}?token=hook_0123456789` }], retryWindow: 0 }).deliver(payload)
      expect(result.delivered).toBe(false)
      expect(result.error?.message).toBe(expected)
      // results[].url stays the URL as configured (the caller's own value); messages are masked.
      for (const r of result.results) expect(r.error?.message).not.toContain('hook_0123456789')
    }
  })
})
