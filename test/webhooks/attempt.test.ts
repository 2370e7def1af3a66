/**
 * `WebhookDestination.attempt`: one attempt and no schedule, for a caller that owns the schedule
 * (the collector's durable queue). Real loopback servers.
 */
import { describe, expect, it } from 'vitest'
import { Stop } from '../../src/transport/stop.js'
import { WebhookDestination, verifySignature } from '../../src/webhooks/index.js'
import { useServers } from './servers.js'

const server = useServers()
const body = '{"version":1,"type":"track","event":"Big","properties":{"id":12345678901234567890123},"timestamp":"2026-11-22T10:00:00.000Z","context":{}}'

describe('WebhookDestination.attempt', () => {
  it('POSTs the given text byte for byte, signed, and reports which URL accepted it', async () => {
    const a = await server({ status: 200 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], sharedSecret: 's' })
    const outcome = await destination.attempt(body)
    expect(outcome).toMatchObject({ deliveredBy: 0, retry: [], results: [{ url: a.url, attempt: 1, status: 200 }] })
    expect(a.requests[0].raw.toString()).toBe(body)
    expect(await verifySignature(a.requests[0].raw, String(a.requests[0].headers['x-signature']), 's')).toBe(true)
  })

  it('does not retry: says which URLs are worth another attempt and the longest Retry-After', async () => {
    const busy = await server({ status: 503, headers: { 'retry-after': '7' } })
    const limited = await server({ status: 429, headers: { 'retry-after': '30' } })
    const refusing = await server({ status: 400 })
    const destination = new WebhookDestination({ urls: [{ url: busy.url }, { url: limited.url }, { url: refusing.url }] })
    const outcome = await destination.attempt(body, { attempt: 3 })
    expect(outcome.deliveredBy).toBe(-1)
    expect(outcome.retry).toEqual([0, 1])
    expect(outcome.retryAfterMs).toBe(30_000)
    expect(outcome.error).toMatchObject({ code: 'HTTP', status: 429 })
    expect(outcome.results.map((r) => [r.attempt, r.status])).toEqual([[3, 503], [3, 429], [3, 400]])
    expect([busy, limited, refusing].map((s) => s.requests.length)).toEqual([1, 1, 1])

    // The next attempt goes only to the URLs named; the others keep their previous outcome.
    const again = await destination.attempt(body, { attempt: 4, urls: outcome.retry, previous: outcome.results })
    expect(again.results.map((r) => [r.attempt, r.status])).toEqual([[4, 503], [4, 429], [3, 400]])
    expect(refusing.requests).toHaveLength(1)
  })

  it('reports each URL\'s answer (its first 1,024 bytes, as text) and how long it took, with either transport', async () => {
    const long = `${'é'.repeat(600)}tail`
    const accepting = await server({ status: 200, body: long })
    const refusing = await server({ status: 500, body: '{"message":"database down"}' })
    const silent = await server({ status: 204 })
    for (const fetch of [undefined, globalThis.fetch]) {
      // One URL each: with several, the first to accept leaves the others `pending`.
      const once = async (url: string) => (await new WebhookDestination({ urls: [{ url }], ...(fetch && { fetch }) }).attempt(body)).results[0]
      const [refused, empty, accepted] = [await once(refusing.url), await once(silent.url), await once(accepting.url)]
      // 600 two-byte characters: the first 512 fit the KB, and nothing of the tail.
      expect(accepted.answer, String(fetch)).toBe('é'.repeat(512))
      expect(refused).toMatchObject({ status: 500, answer: '{"message":"database down"}' })
      expect(empty.answer).toBeUndefined()
      for (const r of [refused, empty, accepted]) {
        expect(r.durationMs).toBeGreaterThanOrEqual(0)
        expect(r.durationMs).toBeLessThan(5_000)
      }
    }
  })

  it('a fetch of the user\'s that resolves with a bare answer (a status and headers, no body or text()) is read as having none', async () => {
    // As the bench's stub fetch does, and as the `fetch` option allows: reading its first KB threw,
    // and the delivery retried for its whole window.
    const answers = [{ status: 200, headers: new Headers() }, { status: 500, headers: new Headers() }]
    const destination = new WebhookDestination({ urls: [{ url: 'https://hooks.test/a' }], fetch: async () => answers.shift() as never })
    const accepted = await destination.attempt(body)
    expect(accepted).toMatchObject({ deliveredBy: 0, results: [{ status: 200 }] })
    expect(accepted.results[0]!.answer).toBeUndefined()
    const refused = await destination.attempt(body)
    expect(refused).toMatchObject({ deliveredBy: -1, retry: [0], results: [{ status: 500 }] })
  })

  it('every URL failing for good leaves nothing to retry', async () => {
    const a = await server({ status: 404 })
    const outcome = await new WebhookDestination({ urls: [{ url: a.url }] }).attempt(body)
    expect(outcome).toMatchObject({ deliveredBy: -1, retry: [], error: { status: 404 } })
    expect(outcome.retryAfterMs).toBeUndefined()
  })

  it('failure(): the error to report once nextRetryDelay gives none, naming the window when that ended it', async () => {
    const busy = await server({ status: 503 })
    const refusing = await server({ status: 400 })
    const destination = new WebhookDestination({ urls: [{ url: busy.url }], retryWindow: 60_000 })
    const outcome = await destination.attempt(body, { attempt: 4 })
    const firstAt = Date.now() - 59_999
    expect(destination.nextRetryDelay(outcome, 4, firstAt)).toBeUndefined()
    const windowEnded = destination.failure(outcome, firstAt)
    expect(windowEnded).toMatchObject({ code: 'HTTP', status: 503, cause: outcome.error })
    expect(windowEnded.message).toBe(`${outcome.error!.message.replace(/\.$/, '')}; no retry: the next would start past the retry window (1 minute from the first attempt).`)
    // Within the window, or refused for good: the attempt's own error.
    const final = await new WebhookDestination({ urls: [{ url: refusing.url }] }).attempt(body)
    expect(new WebhookDestination({ urls: [{ url: refusing.url }] }).failure(final, Date.now())).toBe(final.error)
  })

  it('urls naming no URL, or an index out of range, resolve with a ValidationError on urls: nothing sent, no throw, no hang', async () => {
    const a = await server({ status: 200 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }] })
    for (const urls of [[], [3], [-1], [0.5]]) {
      let outcome: Promise<unknown> | undefined
      expect(() => (outcome = destination.attempt(body, { urls }))).not.toThrow()
      const settled = await Promise.race([outcome, new Promise((resolve) => setTimeout(resolve, 200, "pending"))])
      expect(settled).toMatchObject({ deliveredBy: -1, retry: [], error: { code: 'VALIDATION', field: 'urls' } })
      expect((settled as { error: Error }).error.message).toMatch(/^Expected `urls` to /)
    }
    expect(a.requests).toHaveLength(0)
  })

  it('after close(): sends nothing, resolves at once with a ClientClosedError, and leaves every URL named to retry', async () => {
    const a = await server({ status: 200 })
    const b = await server({ status: 200 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }, { url: b.url }] })
    await destination.close()
    const first = await destination.attempt(body)
    expect(first).toMatchObject({ deliveredBy: -1, retry: [0, 1], error: { name: 'ClientClosedError', code: 'CLIENT_CLOSED' } })
    expect(first.error!.message).toBe('Cannot call attempt() after close().')
    const later = await destination.attempt(body, { attempt: 3, urls: [1], previous: [{ url: a.url, attempt: 2, status: 400 }, { url: b.url, attempt: 2, status: 503 }] })
    expect(later).toMatchObject({ deliveredBy: -1, retry: [1], results: [{ url: a.url, attempt: 2, status: 400 }, { url: b.url, attempt: 3, error: { code: 'CLIENT_CLOSED' } }] })
    // Not final: the retry policy schedules another attempt (a durable queue keeps the message).
    expect(destination.nextRetryDelay(later, 3, Date.now())).toBeTypeOf('number')
    expect(a.requests.length + b.requests.length).toBe(0)
  })

  it('a `signal` aborts the requests still open: the attempt resolves at once, its connection closed', async () => {
    const hanging = await server({ status: 200, hang: true })
    const closed = new Promise<void>((resolve) => hanging.server.once('connection', (socket) => socket.once('close', () => resolve())))
    const stop = new Stop()
    const attempt = new WebhookDestination({ urls: [{ url: hanging.url }] }).attempt(body, { signal: stop })
    await hanging.received(1)
    stop.abort()
    expect(await attempt).toMatchObject({ deliveredBy: -1, error: { code: 'ABORTED' } })
    await closed
  })
})
