/**
 * A URL disabled by one collector is refused by another on the same Redis from the bus alone: the
 * second collector, started before (its records loaded, nothing disabled then), never attempts the
 * URL and never reads its health from the server, yet sends nothing to it once the first one
 * disabled it (the notice on the bus). Two collectors, each its own connections and bus, as two
 * processes are; the health clock is injected.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { buildCollector } from '../../../src/collector/create-collector.js'
import { resolveConfig } from '../../../src/collector/config.js'
import type { Collector } from '../../../src/collector/index.js'
import { startRedis } from '../../helpers/queue-servers.js'
import { batchText, SECRET, startReceiver, until } from './support.js'

const TOKEN = 'admin-token-for-tests'
const MINUTE = 60_000
const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

const request = (path: string, init: { method?: string; body?: string; key?: boolean } = {}) => new Request(`http://collector${path}`, {
  method: init.method ?? 'GET',
  headers: { 'content-type': 'application/json', authorization: init.key ? `Basic ${btoa('KEY:')}` : `Bearer ${TOKEN}` },
  ...(init.body !== undefined && { body: init.body }),
})

describe('endpoint health on Redis: the bus', () => {
  it('a second collector refuses a URL the first disabled, told by the bus alone', async () => {
    const server = await startRedis()
    running.push(() => server.stop())
    const receiver = await startReceiver(() => 503)
    running.push(() => receiver.close())
    const clock = { now: Date.parse('2026-11-29T00:00:00.000Z') }
    const reports: unknown[] = []
    const make = (): Collector => {
      const collector = buildCollector(resolveConfig({
        sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: receiver.url }], sharedSecret: SECRET, retryWindow: 0 } }],
        queue: server.url,
        adminToken: TOKEN,
        disableAfter: MINUTE,
        onError: (error) => reports.push(error),
      }), { now: () => clock.now })
      running.push(() => collector.close(0))
      return collector
    }
    const [a, b] = [make(), make()]
    const stats = async (c: Collector) => (await (await c.fetch(request('/v1/stats'))).json()) as { failed: number }
    const disabled = async () => ((await (await a.fetch(request('/v1/admin/endpoints'))).json()) as { endpoints: Array<{ state: string }> }).endpoints[0]?.state === 'disabled'
    const send = async (c: Collector, n: number) => expect((await c.fetch(request('/v1/batch', { method: 'POST', key: true, body: batchText(n, 1) }))).status).toBe(200)

    // B has started (its records loaded, its bus listening: a 200 waits for both): nothing disabled yet.
    await until(async () => (await b.fetch(request('/v1/stats'))).status === 200, 'B started')
    await send(a, 1)
    await until(async () => (await stats(a)).failed === 1, 'the first failure')
    clock.now += MINUTE
    await send(a, 2)
    // A's answer comes after its merge, and after that merge's notice on the bus.
    await until(disabled, 'disabled by A', 30_000)
    expect(reports.map((r) => (r as Error).name)).toEqual(['EndpointDisabledError'])

    await send(b, 3)
    await until(async () => (await stats(b)).failed === 3, 'B\'s message failed')
    expect(receiver.attempts.map((r) => r.messageId)).toEqual(['m-1', 'm-2'])
    const record = ((await (await b.fetch(request('/v1/admin/messages'))).json()) as { messages: Array<{ message: { messageId: string }; delivery: { attempts: Array<{ results: Array<{ error?: string }> }> } }> })
      .messages.find((m) => m.message.messageId === 'm-3')
    expect(record?.delivery.attempts[0].results[0].error).toMatch(/^Not sent: .* is disabled/)
    expect(reports).toHaveLength(1)
  }, 60_000)
})
