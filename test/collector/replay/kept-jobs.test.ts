/**
 * Payloads kept for replay in BullMQ's completed jobs (src/collector/replay/kept-jobs.ts) on a
 * real queue server, with an injected clock: `keptInJobs` is given `now`, so a window is asked
 * about within the retention, past it and past the counted week without waiting for any of them.
 * A worker runs `batch` and `deliver` jobs whose processor returns how each payload settled (the
 * letters the JobRunner returns), its completed jobs kept as the collector's are
 * (`removeOnComplete: { age }`), and its `completed` event feeds `CompletedCounts`.
 *
 * The jobs' acceptance times are set (a `batch` job's `timestamp`, a replay's `acceptedAt`, a
 * `deliver` job's `a`) from T0, the last whole hour but one: in the past, as the server's clock
 * has it, so the counts' keys expire as they would for payloads accepted then.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { QueueServer } from '../../../src/collector/config.js'
import type { BatchData, DeliverData } from '../../../src/collector/delivery/bullmq-job-data.js'
import { KEPT_COUNTED_MS, type KeptWindow } from '../../../src/collector/replay/kept.js'
import { CompletedCounts, countsOf, keptInJobs, MINUTE, type KeptCounts } from '../../../src/collector/replay/kept-jobs.js'
import { bullmqQueue, bullmqWorker, createTables, loadBullmq, loadPg, loadRedis, REDIS_CLIENT_OPTIONS } from '../../../src/collector/state/drivers.js'
import { PostgresStore, TABLES } from '../../../src/collector/state/postgres-store.js'
import { RedisStore } from '../../../src/collector/state/redis-store.js'
import { startPostgres, startRedis } from '../../helpers/queue-servers.js'
import { until } from '../../helpers/until.js'

type Job = import('bullmq').Job

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

const HOUR = 3_600_000
const RETENTION = HOUR
const T0 = Math.floor(Date.now() / HOUR) * HOUR - HOUR
const M0 = T0 / MINUTE
const body = (id: string) => JSON.stringify({ type: 'track', event: 'Kept', userId: 'u-1', messageId: id, version: 1 })
const idOf = (text: string) => (JSON.parse(text) as { messageId: string }).messageId

/** A queue server started for a test, and the store that counts the payloads kept in its completed jobs. */
interface Counting {
  server: QueueServer
  counts: KeptCounts
  stop: () => Promise<void>
}

async function redisCounting(): Promise<Counting> {
  const redisServer = await startRedis()
  // As `openStore` (state/shared-state.ts) opens the store.
  const Redis = await loadRedis()
  const redis = new Redis(redisServer.url, { ...REDIS_CLIENT_OPTIONS, maxRetriesPerRequest: null })
  redis.on('error', () => {})
  const store = new RedisStore(redis)
  const stop = async () => {
    await store.close()
    await redisServer.stop()
  }
  return { server: { kind: 'redis', url: redisServer.url }, counts: store, stop }
}

async function postgresCounting(): Promise<Counting> {
  const pgServer = await startPostgres()
  // As `openStore` (state/shared-state.ts) opens the store.
  const { Pool } = await loadPg()
  const pool = new Pool({ connectionString: pgServer.url, max: 4 })
  pool.on('error', () => {})
  await createTables((sql) => pool.query(sql), TABLES)
  const store = new PostgresStore(pool)
  const stop = async () => {
    await store.close()
    await pgServer.stop()
  }
  return { server: { kind: 'postgres', url: pgServer.url }, counts: store, stop }
}

/** Each queue server whose store counts what its completed jobs keep. */
const COUNTING_SERVERS: Array<[name: string, start: () => Promise<Counting>]> = [
  ['Redis', redisCounting],
  ['PostgreSQL', postgresCounting],
]

/** A job to run: `letters`, what its processor returns (how each of its payloads settled). */
type Run = { id: string; letters: string; at?: number } & ({ name: 'batch'; data: BatchData } | { name: 'deliver'; data: DeliverData })

const batch = (id: string, at: number, letters: string, source = 'web'): Run => ({
  id, letters, at, name: 'batch', data: { s: source, d: [...letters].map((_, i) => ['track', body(`${id}.${i}`), `${id}.${i}`]) },
})
/** A retry (or a replay, with `wasFailed`) of the payload `of`, accepted at `at`. */
const deliver = (id: string, of: string, at: number, letter: 'd' | 'f', wasFailed?: 0 | 1): Run => ({
  id, letters: letter, name: 'deliver', data: { s: 'web', t: 'track', b: body(of), n: 1, f: at, a: at, ...(wasFailed !== undefined && { w: wasFailed }) },
})

/** A queue and its worker on a server `start` starts; `run` resolves once its jobs completed and were counted. */
async function keeping(start: () => Promise<Counting>) {
  const { server, counts, stop } = await start()
  running.push(stop)
  const bullmq = await loadBullmq(server)
  const queue = bullmqQueue(bullmq, server, 'kept-jobs')
  running.push(() => queue.close())
  const letters = new Map<string, string>()
  const reported: unknown[] = []
  const counted = new CompletedCounts(() => Promise.resolve(counts), RETENTION, (error) => reported.push(error))
  let completed = 0
  const worker = bullmqWorker(bullmq, server, 'kept-jobs', (job) => Promise.resolve(letters.get(job.id!)), {
    concurrency: 1,
    autorun: true,
    // As bullmq-connection.ts keeps them: for the retention, in seconds.
    removeOnComplete: { age: Math.ceil(RETENTION / 1_000) },
  })
  worker.on('completed', (job, result) => {
    counted.completed(job, result)
    completed++
  })
  running.push(() => worker.close())
  await worker.waitUntilReady()
  return {
    counts,
    async run(...jobs: Run[]): Promise<void> {
      for (const job of jobs) letters.set(job.id, job.letters)
      const target = completed + jobs.length
      await queue.addBulk(jobs.map((job) => ({ name: job.name, data: job.data, opts: { jobId: job.id, ...(job.at !== undefined && { timestamp: job.at }) } })))
      await until(() => completed >= target, `${jobs.length} jobs completed`, 10_000, { progress: () => completed })
      await counted.written()
      expect(reported).toEqual([])
    },
    window: (from: number, to: number, failedOnly: boolean, now: number, source = 'web') => keptInJobs(queue, counts, RETENTION, { source, from, to, failedOnly }, now),
  }
}

/**
 * What every case starts from, source `web` unless said (`bN.i`: payload i of batch job bN):
 * minute 0 (T0): b0.0 delivered at T0 + 0.2 s; at T0 + 1 s b1.0 delivered, b1.1 failed, b1.2
 * retried then failed (its `deliver` job), b1.3 a duplicate, b1.4 retried (its retry not
 * finished); b2.0 of source `app`. Minute 1: at T0 + 1:05 b3.0 delivered, b3.1 failed; at
 * T0 + 1:40 b4.0 failed. Minute 10: b5.0 delivered.
 */
async function settleFirst(kept: Awaited<ReturnType<typeof keeping>>): Promise<void> {
  await kept.run(
    batch('b0', T0 + 200, 'd'),
    batch('b1', T0 + 1_000, 'dfr-r'),
    batch('b2', T0 + 1_000, 'd', 'app'),
    batch('b3', T0 + MINUTE + 5_000, 'df'),
    batch('b4', T0 + MINUTE + 40_000, 'f'),
    batch('b5', T0 + 10 * MINUTE, 'd'),
  )
  await kept.run(deliver('d1.2', 'b1.2', T0 + 1_000, 'f'))
}

/** From T0 + 0.5 s to T0 + 1:30: b1's and b3's payloads; b0.0 and b4.0 are outside it, in the minutes it touches. */
const FROM = T0 + 500
const TO = T0 + MINUTE + 30_000
/** Past the retention of everything accepted in minutes 0 and 1. */
const PAST = T0 + 2 * MINUTE + RETENTION + MINUTE

/**
 * The window's payloads as `id at failed` (at: ms after T0), ordered by id; checks they come
 * ordered by `at`, of `source`, with their exact bodies.
 */
function seen({ kept, unavailable }: KeptWindow, source = 'web'): { kept: string[]; unavailable: number } {
  expect(kept.map((item) => item.at)).toEqual(kept.map((item) => item.at).sort((a, b) => a - b))
  for (const item of kept) expect([item.source, item.body]).toEqual([source, body(idOf(item.body))])
  return { kept: kept.map((item) => `${idOf(item.body)} ${item.at - T0}${item.failed ? ' failed' : ''}`).sort(), unavailable }
}

describe.each(COUNTING_SERVERS)('%s: payloads kept in the completed jobs', (_name, start) => {
  it('within the retention: each settled payload of the window, once, with its outcome; `failedOnly` the failed ones', async () => {
    const kept = await keeping(start)
    await settleFirst(kept)
    const now = T0 + 20 * MINUTE
    // Not b1.3 (a duplicate, not attempted) nor b1.4 (retried, not settled); b1.2 by its `deliver` job.
    expect(seen(await kept.window(FROM, TO, false, now))).toEqual({
      kept: ['b1.0 1000', 'b1.1 1000 failed', 'b1.2 1000 failed', 'b3.0 65000', 'b3.1 65000 failed'],
      unavailable: 0,
    })
    expect(seen(await kept.window(FROM, TO, true, now))).toEqual({ kept: ['b1.1 1000 failed', 'b1.2 1000 failed', 'b3.1 65000 failed'], unavailable: 0 })
    expect(seen(await kept.window(FROM, TO, false, now, 'app'), 'app')).toEqual({ kept: ['b2.0 1000'], unavailable: 0 })
    // Counted by minute of acceptance: what settled, and the failed ones.
    expect(await kept.counts.keptCounts('web', M0 - 1, M0 + 10)).toEqual(new Map([
      [M0, { all: 4, failed: 2 }],
      [M0 + 1, { all: 3, failed: 2 }],
      [M0 + 10, { all: 1, failed: 0 }],
    ]))
  }, 30_000)

  it('past the retention: no longer kept, counted as unavailable by the minutes the window touches', async () => {
    const kept = await keeping(start)
    await settleFirst(kept)
    // Minute 0 is past the retention, minute 1 is not yet.
    const between = T0 + MINUTE + RETENTION
    expect(seen(await kept.window(FROM, TO, false, between))).toEqual({ kept: ['b3.0 65000', 'b3.1 65000 failed'], unavailable: 4 })
    expect(seen(await kept.window(FROM, TO, true, between))).toEqual({ kept: ['b3.1 65000 failed'], unavailable: 2 })
    // Both past it: every payload of minutes 0 and 1 (b0.0 and b4.0 too: the counts are by minute).
    expect(await kept.window(FROM, TO, false, PAST)).toEqual({ kept: [], unavailable: 7 })
    expect(await kept.window(FROM, TO, true, PAST)).toEqual({ kept: [], unavailable: 4 })
    // Minute 10 still kept.
    expect(seen(await kept.window(T0 + 10 * MINUTE, T0 + 11 * MINUTE, false, PAST))).toEqual({ kept: ['b5.0 600000'], unavailable: 0 })
  }, 30_000)

  it('a replay that settles again counts once, with its latest outcome; the failed counts move', async () => {
    const kept = await keeping(start)
    await settleFirst(kept)
    // Replays of b1.1 (failed: retried, then delivered), b3.0 (delivered: fails now) and b3.1
    // (failed: fails again). Their ids sort after the first jobs' (`r…`): should two jobs finish
    // in the same millisecond, the server lists the replay's first, as it does when it is later.
    const replay: Run = {
      id: 'r1', letters: 'rff', name: 'batch',
      data: { s: 'web', d: [['track', body('b1.1'), 'b1.1', null, T0 + 1_000, null, 1], ['track', body('b3.0'), 'b3.0', null, T0 + MINUTE + 5_000, null, 0], ['track', body('b3.1'), 'b3.1', null, T0 + MINUTE + 5_000, null, 1]] },
    }
    await kept.run(replay)
    await kept.run(deliver('rd1.1', 'b1.1', T0 + 1_000, 'd', 1))
    const now = T0 + 20 * MINUTE
    expect(seen(await kept.window(FROM, TO, false, now))).toEqual({
      kept: ['b1.0 1000', 'b1.1 1000', 'b1.2 1000 failed', 'b3.0 65000 failed', 'b3.1 65000 failed'],
      unavailable: 0,
    })
    // b1.1 is delivered now: neither kept nor unavailable among the failed ones.
    expect(seen(await kept.window(FROM, TO, true, now))).toEqual({ kept: ['b1.2 1000 failed', 'b3.0 65000 failed', 'b3.1 65000 failed'], unavailable: 0 })
    expect(await kept.counts.keptCounts('web', M0, M0 + 1)).toEqual(new Map([[M0, { all: 4, failed: 1 }], [M0 + 1, { all: 3, failed: 3 }]]))
    expect(await kept.window(FROM, TO, false, PAST)).toEqual({ kept: [], unavailable: 7 })
    expect(await kept.window(FROM, TO, true, PAST)).toEqual({ kept: [], unavailable: 4 })
  }, 30_000)

  it('past the counted week after the retention: a minute is no longer counted', async () => {
    const kept = await keeping(start)
    await settleFirst(kept)
    // Minute 0 forgotten, minute 1 still counted.
    const week = T0 + MINUTE + RETENTION + KEPT_COUNTED_MS
    expect(await kept.window(FROM, TO, false, week)).toEqual({ kept: [], unavailable: 3 })
    expect(await kept.window(FROM, TO, true, week)).toEqual({ kept: [], unavailable: 2 })
    expect(await kept.window(FROM, TO, false, week + MINUTE)).toEqual({ kept: [], unavailable: 0 })
    expect(await kept.window(FROM, TO, true, week + MINUTE)).toEqual({ kept: [], unavailable: 0 })
  }, 30_000)
})

/** A job as `countsOf` reads it: its name, data and when it was added. */
const jobOf = ({ name, data, at }: Run): Job => ({ name, data, timestamp: at ?? T0 }) as unknown as Job

describe('countsOf', () => {
  it('counts settled payloads by source and minute of acceptance, and nothing else', () => {
    expect(countsOf(jobOf(batch('b', T0 + 1_000, 'dfr-f')), 'dfr-f')).toEqual([{ source: 'web', minute: M0, all: 3, failed: 2 }])
    // A result shorter than the payloads (or none): only what it tells.
    expect(countsOf(jobOf(batch('b', T0, 'ddd')), 'd')).toEqual([{ source: 'web', minute: M0, all: 1, failed: 0 }])
    expect(countsOf(jobOf(batch('b', T0, 'd')), undefined)).toEqual([])
    expect(countsOf(jobOf(deliver('d', 'x', T0 + MINUTE, 'f')), 'f')).toEqual([{ source: 'web', minute: M0 + 1, all: 1, failed: 1 }])
    expect(countsOf(jobOf(deliver('d', 'x', T0, 'd')), 'r')).toEqual([])
  })

  it('a replay counts no payload again; only an outcome that changed moves the failed count', () => {
    const replay = (wasFailed: 0 | 1, letter: 'd' | 'f') => countsOf(jobOf(deliver('d', 'x', T0, letter, wasFailed)), letter)
    expect(replay(1, 'd')).toEqual([{ source: 'web', minute: M0, all: 0, failed: -1 }])
    expect(replay(0, 'f')).toEqual([{ source: 'web', minute: M0, all: 0, failed: 1 }])
    expect(replay(1, 'f')).toEqual([])
    expect(replay(0, 'd')).toEqual([])
  })
})
