/**
 * A queue server the collector cannot use when it starts: PostgreSQL not running yet, a database
 * not created yet, a Redis database the server refuses. The collector listens anyway (after its
 * 10 s readiness bound), answers senders 503 QUEUE_UNAVAILABLE within 5 s, reports the failure
 * (not once per try), keeps trying about once a second, and takes deliveries as soon as the
 * server can be used; SIGTERM ends it at once. A request made while the collector is still
 * starting has one 5 s deadline for the start-up and the write together. Real servers; collectors
 * in child processes, or in this one for a request made at once.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, type Collector } from '../../../src/collector/index.js'
import { loadPg, loadRedis } from '../../../src/collector/state/drivers.js'
import { freePort, startPostgres, startRedis } from '../../helpers/queue-servers.js'
import { batchText, post, send, startCollector, startReceiver, stop, until, type CollectorProcess } from './support.js'

const started: CollectorProcess[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => stop(c, 'SIGKILL')))
})

/** One request, answered 503 QUEUE_UNAVAILABLE with Retry-After once it has waited 5 s at most. */
async function unavailable(url: string, from: number) {
  const sentAt = Date.now()
  const response = await post(url, batchText(from, 5))
  const body = (await response.json()) as { error?: { code: string } }
  expect([response.status, response.headers.get('retry-after'), body.error?.code]).toEqual([503, '5', 'QUEUE_UNAVAILABLE'])
  expect(Date.now() - sentAt).toBeLessThan(5_000 + 1_000)
}

const reports = (collector: CollectorProcess, pattern: RegExp) => collector.stderr().split('\n').filter((line) => line.startsWith('collector error') && pattern.test(line))

describe('a queue server unusable at start-up', () => {
  it('PostgreSQL not running yet: 503 within 5 s meanwhile, then 200 within about a second of it starting', async () => {
    const port = await freePort()
    const receiver = await startReceiver(() => 200)
    let postgres: Awaited<ReturnType<typeof startPostgres>> | undefined
    try {
      const collector = await startCollector({ QUEUE: `postgres://postgres@127.0.0.1:${port}/postgres`, WEBHOOK: receiver.url })
      started.push(collector)
      await unavailable(collector.url, 80_000)
      // Tried again and again (10 s already), reported once per 10 s, not per try.
      expect(reports(collector, /queue server: connect ECONNREFUSED/).length).toBeLessThanOrEqual(2)
      postgres = await startPostgres({ port })
      const upAt = Date.now()
      await until(async () => (await send(collector.url, batchText(80_100, 5))) === 200, 'a 200 once PostgreSQL is up', 10_000)
      expect(Date.now() - upAt).toBeLessThan(3_000)
      await until(() => receiver.accepted.length === 5, 'the batch delivered')
    } finally {
      await receiver.close()
      await postgres?.stop()
    }
  }, 40_000)

  it('a PostgreSQL database that does not exist: answered 503, reported without a flood, SIGTERM exits at once; taken once it is created', async () => {
    const postgres = await startPostgres()
    const receiver = await startReceiver(() => 200)
    try {
      const collector = await startCollector({ QUEUE: postgres.url.replace(/\/postgres$/, '/analytics'), WEBHOOK: receiver.url })
      started.push(collector)
      await unavailable(collector.url, 81_000)
      const missing = reports(collector, /database "analytics" does not exist/)
      expect(missing.length).toBeGreaterThan(0)
      // Each part that saw it (queue, worker, bus, settings), once per 10 s: not once per try.
      expect(missing.length).toBeLessThan(10)
      const admin = new (await loadPg()).Client({ connectionString: postgres.url })
      await admin.connect()
      await admin.query('CREATE DATABASE analytics')
      await admin.end()
      await until(async () => (await send(collector.url, batchText(81_100, 5))) === 200, 'a 200 once the database exists', 10_000)
      await until(() => receiver.accepted.length === 5, 'the batch delivered')
      const signalledAt = Date.now()
      expect((await stop(collector)).code).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThan(3_000)
    } finally {
      await receiver.close()
      await postgres.stop()
    }
  }, 40_000)

  it('a PostgreSQL database that does not exist: SIGTERM ends the collector within a second or so', async () => {
    const postgres = await startPostgres()
    try {
      const collector = await startCollector({ QUEUE: postgres.url.replace(/\/postgres$/, '/nodb'), WEBHOOK: 'http://127.0.0.1:9/hook', DRAIN: '1000' })
      started.push(collector)
      const signalledAt = Date.now()
      expect((await stop(collector)).code).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThan(100 + 1_000 + 1_000)
    } finally {
      await postgres.stop()
    }
  }, 30_000)

  it('a Redis database the server refuses (/16 of 16): 503 and reported, never written to database 0', async () => {
    const redis = await startRedis()
    try {
      const collector = await startCollector({ QUEUE: `${redis.url}/16`, WEBHOOK: 'http://127.0.0.1:9/hook' })
      started.push(collector)
      await unavailable(collector.url, 82_000)
      expect(reports(collector, /DB index is out of range/).length).toBeGreaterThan(0)
      const db0 = new (await loadRedis())(redis.url)
      try {
        expect(await db0.keys('bull:*')).toEqual([])
      } finally {
        db0.disconnect()
      }
    } finally {
      await redis.stop()
    }
  }, 30_000)
})

describe('a request made while the collector is still starting', () => {
  let library: Collector | undefined
  afterEach(async () => {
    await library?.close(0)
    library = undefined
  })

  /** A collector in this process on `queue`, asked at once (before it has connected). */
  function startedNow(queue: string): Collector {
    return (library = createCollector({
      sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: 'http://127.0.0.1:9/hook' }] } }],
      queue,
      adminToken: 'admin-token-for-tests',
      onError: () => {},
    }))
  }

  /** Answered 503 QUEUE_UNAVAILABLE with Retry-After, within the 5 s (plus a little), whatever it waited for. */
  async function answeredInTime(collector: Collector, request: Request) {
    const sentAt = Date.now()
    const response = await collector.fetch(request)
    const body = (await response.json()) as { error?: { code: string; message: string } }
    expect([response.status, response.headers.get('retry-after'), body.error]).toEqual([503, '5', { code: 'QUEUE_UNAVAILABLE', message: 'The queue server did not answer within 5 s. Retry later.' }])
    expect(Date.now() - sentAt).toBeLessThan(5_000 + 1_000)
  }

  const admin = (path: string, body: unknown) => new Request(`http://collector${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer admin-token-for-tests' },
    body: JSON.stringify(body),
  })
  /** A deletion and an audience sync, answered as ingest is while the queue server cannot be used. */
  const adminRequests = () => [admin('/v1/deletions', { userId: 'u-1' }), admin('/v1/audiences', { source: 'web', audience: 'buyers', members: ['u-1', 'u-2'] })]

  const batch = (from: number) => new Request('http://collector/v1/batch', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
    body: batchText(from, 5),
  })

  it('Redis unreachable: 503 within 5 s, not 5 s for the bus and the saved settings and then 5 s for the write (the admin requests too)', async () => {
    const collector = startedNow(`redis://127.0.0.1:${await freePort()}`)
    await Promise.all([batch(83_000), ...adminRequests()].map((request) => answeredInTime(collector, request)))
  }, 30_000)

  it('a Redis that accepts connections and never answers: ingest, GET /v1/stats and the admin requests are answered 503 within 5 s, not held for as long as it is frozen', async () => {
    const redis = await startRedis()
    try {
      redis.freeze(true)
      const collector = startedNow(redis.url)
      await Promise.all([
        answeredInTime(collector, batch(83_100)),
        answeredInTime(collector, new Request('http://collector/v1/stats', { headers: { authorization: 'Bearer admin-token-for-tests' } })),
        ...adminRequests().map((request) => answeredInTime(collector, request)),
      ])
    } finally {
      redis.freeze(false)
      await redis.stop()
    }
  }, 30_000)
})
