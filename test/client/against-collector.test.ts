/**
 * The client against the collector's own ingest rules, through the testing kit: whatever the
 * client sends in any of its forms (JSON with Basic auth, the browser's text/plain form, gzip),
 * the collector accepts, and faults scripted at the collector are ridden out or reported.
 */
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { Client, type ClientOptions } from '../../src/index.js'
import { createFakeCollector } from '../../src/testing/index.js'

const ENDPOINT = 'https://collector.test'
const KEY = 'kit-key'
const fake = createFakeCollector({ writeKey: KEY, endpoint: ENDPOINT })
const server = setupServer(...fake.handlers)
const clients: Client[] = []

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
afterEach(async () => {
  vi.useRealTimers()
  await Promise.all(clients.splice(0).map((c) => c.close(0)))
  fake.reset()
})
afterAll(() => server.close())

function client(options: ClientOptions = {}): Client {
  const c = new Client(KEY, { endpoint: ENDPOINT, ...options })
  clients.push(c)
  return c
}

function sendEveryCall(c: Client): string[] {
  return [
    c.identify({ userId: 'u1', traits: { name: 'Zoë', plan: 'pro' }, context: { ip: '203.0.113.7' } }),
    c.track({ anonymousId: 'a1', event: 'Order Completed', properties: { total: 42.5, at: new Date(0) } }),
    c.page({ userId: 'u1', name: 'Pricing', category: 'Docs', traits: { path: '/pricing' } }),
    c.screen({ userId: 'u1', name: 'Settings', properties: { tab: 'billing' } }),
    c.group({ userId: 'u1', groupId: 'acme', traits: { 'Company Name': 'ACME' } }),
    c.alias({ userId: 'u1', previousId: 'a1', timestamp: '2026-01-01T00:00:00.000Z' }),
  ].map((m) => m.messageId)
}

describe('the client against the collector (testing kit)', () => {
  const forms: Array<[string, ClientOptions]> = [
    ['JSON with Basic auth', {}],
    ['text/plain with writeKey in the body (the browser form)', { plainText: true }],
    ['gzip', { gzip: true }],
  ]
  it.each(forms)('every call in the %s form passes the collector’s validation', async (_, options) => {
    const c = client({ ...options, flushAt: 3 })
    const ids = sendEveryCall(c)
    expect(await c.flush()).toEqual({ delivered: 6, failed: 0 })
    expect(fake.requests.map((r) => r.status)).toEqual([200, 200])
    // The two batches go out at once and may arrive in either order (gzip compresses off the
    // caller's stack): in the order of the calls, within each batch.
    const batches = fake.requests.map((r) => (JSON.parse(r.body!) as { batch: Array<{ messageId: string }> }).batch.map((m) => m.messageId))
    batches.sort((a, b) => ids.indexOf(a[0]) - ids.indexOf(b[0]))
    expect(batches).toEqual([ids.slice(0, 3), ids.slice(3)])
    const messages = [...fake.messages].sort((a, b) => ids.indexOf(a.messageId as string) - ids.indexOf(b.messageId as string))
    expect(messages.map((m) => m.type)).toEqual(['identify', 'track', 'page', 'screen', 'group', 'alias'])
    expect(messages[0]).toMatchObject({ context: { ip: '203.0.113.7', library: { name: 'isomorphic-analytics' } } })
    expect(messages[2]).toMatchObject({ properties: { path: '/pricing' } })
  })

  it('rides out scripted faults (503, network error, 429 with Retry-After) with byte-identical retries', async () => {
    vi.useFakeTimers()
    fake.reply({ status: 503 }, { networkError: true }, { status: 429, headers: { 'Retry-After': '2' } })
    const c = client({ flushAt: 6 })
    const ids = sendEveryCall(c)
    const flushed = c.flush()
    await vi.advanceTimersByTimeAsync(1_999)
    expect(fake.requests).toHaveLength(3) // the Retry-After wait is not over yet
    await vi.advanceTimersByTimeAsync(60_000)
    expect(await flushed).toEqual({ delivered: 6, failed: 0 })
    expect(fake.requests.map((r) => r.status)).toEqual([503, 0, 429, 200])
    expect(new Set(fake.requests.map((r) => r.body)).size).toBe(1)
    expect(fake.messages.map((m) => m.messageId)).toEqual(ids)
  })

  it('reports a batch the collector refuses for good, with its messages', async () => {
    fake.reply({ status: 400 })
    const c = client({ flushAt: 6 })
    const errors: Array<{ status?: number; messages: readonly unknown[] }> = []
    c.on('error', (e) => errors.push(e))
    const ids = sendEveryCall(c)
    expect(await c.flush()).toEqual({ delivered: 0, failed: 6 })
    expect(errors).toHaveLength(1)
    expect(errors[0].status).toBe(400)
    expect(errors[0].messages.map((m) => (m as { messageId: string }).messageId)).toEqual(ids)
    expect(fake.messages).toEqual([])
  })

  it("a wrong write key is reported with the collector's reason, not just its status", async () => {
    const c = new Client('wrong-key', { endpoint: ENDPOINT, debug: false })
    clients.push(c)
    const errors: Array<Error & { status?: number }> = []
    c.on('error', (e) => errors.push(e))
    c.track({ userId: 'u', event: 'E' })
    expect(await c.flush()).toEqual({ delivered: 0, failed: 1 })
    expect(errors[0].status).toBe(401)
    expect(errors[0].message).toBe(`${ENDPOINT}/v1/batch answered 401: Unknown write key.`)
  })
})
