/**
 * Endpoint health with a queue server, on real Redis and real PostgreSQL: two collectors (each its
 * own connections and bus, as two processes are) share each URL's health. Failures attempted by
 * either add up; the URL is disabled once for both (one report, from whichever merged last), both
 * stop sending to it, and enabling it through one (with replay) lets either deliver what it missed.
 * On Redis, a URL one collector disabled is refused by the other from the bus alone: the other,
 * started before (its records loaded, nothing disabled then), never attempts the URL nor reads
 * its health from the server, yet sends nothing to it. The health clock is injected (shared by
 * both), never waited for.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { buildCollector } from '../../../src/collector/create-collector.js'
import { resolveConfig } from '../../../src/collector/config.js'
import type { Collector } from '../../../src/collector/index.js'
import { startPostgres, startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { batchText, SECRET, startReceiver, until } from './support.js'
import { QueueBus } from '../../../src/collector/state/bus.js'
import { resolveQueue } from '../../../src/collector/queue-server.js'
import { queueHealth } from '../../../src/collector/state/shared-health.js'
import { addOutcome, emptyOutcomes, merge } from '../../../src/collector/health/record.js'

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

/**
 * Two collectors on the queue server at `queue`, forwarding to `url` (no retry), disabling after a
 * minute of failures by one injected clock, their reports to `onError` gathered.
 */
function twoCollectors(queue: string, url: string) {
  const clock = { now: Date.parse('2026-11-29T00:00:00.000Z') }
  const reports: unknown[] = []
  const make = (): Collector => {
    const collector = buildCollector(resolveConfig({
      sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url }], sharedSecret: SECRET, retryWindow: 0 } }],
      queue,
      adminToken: TOKEN,
      disableAfter: MINUTE,
      onError: (error) => reports.push(error),
    }), { now: () => clock.now })
    running.push(() => collector.close(0))
    return collector
  }
  return { clock, reports, collectors: [make(), make()] as const }
}

describe.each<[string, () => Promise<QueueServerProcess>]>([
  ['Redis', () => startRedis()],
  ['PostgreSQL', () => startPostgres()],
])('endpoint health on %s, two collectors', (_name, start) => {
  it('adds up both collectors\' failures, disables once for both, enables with replay through one', async () => {
    const server = await start()
    running.push(() => server.stop())
    const answer = { status: 503 }
    const receiver = await startReceiver(() => answer.status)
    running.push(() => receiver.close())
    const { clock, reports, collectors: [a, b] } = twoCollectors(server.url, receiver.url)
    const endpoint = async (c: Collector) => ((await (await c.fetch(request('/v1/admin/endpoints'))).json()) as { endpoints: Array<Record<string, unknown>> }).endpoints[0]
    const failed = async () => ((await (await a.fetch(request('/v1/stats'))).json()) as { failed: number }).failed
    let n = 0
    const send = async (c: Collector) => expect((await c.fetch(request('/v1/batch', { method: 'POST', key: true, body: batchText(++n, 1) }))).status).toBe(200)

    await send(a)
    await send(b)
    await until(async () => (await endpoint(b))?.failures1h === 2, 'two failures merged', 30_000, () => receiver.attempts.length)
    expect(await endpoint(a)).toMatchObject({ state: 'failing', attempts1h: 2, failures1h: 2, consecutiveFailures: 2, lastError: expect.stringContaining('503'), disabledAt: null })

    clock.now += MINUTE
    await send(b)
    await until(async () => (await endpoint(a))?.state === 'disabled', 'disabled', 30_000)
    expect(await endpoint(b)).toMatchObject({ state: 'disabled', consecutiveFailures: 3, disabledAt: new Date(clock.now).toISOString() })
    expect(reports.map((r) => (r as Error).name)).toEqual(['EndpointDisabledError'])

    // Neither sends to it any more: both messages fail, with the reason, without a request.
    const attempted = receiver.attempts.length
    await send(a)
    await send(b)
    await until(async () => (await failed()) === 5, 'five failed', 30_000)
    expect(receiver.attempts.length).toBe(attempted)
    expect(reports).toHaveLength(1)

    answer.status = 200
    const enabled = await b.fetch(request('/v1/admin/endpoints/enable', { method: 'POST', body: JSON.stringify({ source: 'web', url: receiver.url, replay: true }) }))
    expect(await enabled.json()).toMatchObject({ success: true, wasDisabled: true, replayed: 2, notReplayed: 0, endpoint: { state: 'healthy' } })
    await until(() => receiver.accepted.length === 2, 'the two missed messages delivered', 30_000)
    expect(receiver.accepted.map((r) => r.messageId).sort()).toEqual(['m-4', 'm-5'])
    await until(async () => (await endpoint(a))?.consecutiveFailures === 0 && (await endpoint(a))?.state === 'healthy', 'healthy for A', 30_000)
    expect(reports).toHaveLength(1)
  }, 90_000)

  it('two processes merging into one record at once: every failure counts, and one of them sees it disabled', async () => {
    const server = await start()
    running.push(() => server.stop())
    const stores = [0, 1].map(() => {
      const bus = new QueueBus(resolveQueue(server.url)!, (error) => { throw error })
      running.push(() => bus.close())
      return queueHealth(bus)
    })
    const failure = (at: number) => {
      const outcomes = emptyOutcomes()
      addOutcome(outcomes, at, 'answered 503')
      return outcomes
    }
    // 2 × 10 failures, 1 s apart in each process (one merge after another, as EndpointHealth
    // makes them), both processes at once: the last ones reach disableAfter (8 s).
    const merging = stores.map(async (store, p) => {
      const made = []
      for (let i = 0; i < 10; i++) {
        const at = 1_000_000 + i * 1_000 + p * 500
        made.push(await store.update('web\u001fhttps://hook.test/', (held) => merge(held, failure(at), at, 8_000)))
      }
      return made
    })
    const results = (await Promise.all(merging)).flat()
    const [all] = [...(await stores[1].readAll()).values()]
    expect(all).toMatchObject({ consecutiveFailures: 20, minutes: [[16, 20, 20]] })
    expect([1_000_000, 1_000_500]).toContain(all.failingSince)
    expect(results.filter((r) => r.before?.disabledAt === undefined && r.after.disabledAt !== undefined)).toHaveLength(1)
  }, 60_000)
})

describe('endpoint health on Redis: the bus', () => {
  it('a second collector refuses a URL the first disabled, told by the bus alone', async () => {
    const server = await startRedis()
    running.push(() => server.stop())
    const receiver = await startReceiver(() => 503)
    running.push(() => receiver.close())
    const { clock, reports, collectors: [a, b] } = twoCollectors(server.url, receiver.url)
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
