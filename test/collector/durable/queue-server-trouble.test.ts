/**
 * Trouble around the queue server: one that goes away (the collector still exits within its
 * drain timeout plus a second on SIGTERM, its connections dropped when the server does not
 * answer; each distinct failure reported at most once per 10 s however failures alternate), one
 * that refuses writes (PostgreSQL stopped, Redis full: 503, not 500, reported once), and shared
 * counts a killed process left wrong (corrected once no job backs them, so the backlog limit does
 * not refuse senders for good). Real redis-server and PostgreSQL; collectors in child processes.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { oncePer } from '../../../src/collector/once-per.js'
import { loadRedis } from '../../../src/collector/state/drivers.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { startPostgres, startRedis } from '../../helpers/queue-servers.js'
import { batchText, post, send, startCollector, startReceiver, stop, until, type CollectorProcess } from './support.js'

const started: CollectorProcess[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map((c) => stop(c, 'SIGKILL')))
})

describe('the queue server goes away', () => {
  it('a sender is answered 503 QUEUE_UNAVAILABLE with Retry-After within 5 s, not held open; SIGTERM still exits within the drain timeout + 1 s', async () => {
    const redis = await startRedis()
    const receiver = await startReceiver(() => 200, () => 2_000)
    try {
      const collector = await startCollector({ QUEUE: redis.url, WEBHOOK: receiver.url, DRAIN: '1000' })
      started.push(collector)
      expect(await send(collector.url, batchText(70_000, 20))).toBe(200)
      await until(() => receiver.attempts.length > 0, 'an attempt in flight')
      await redis.stop()
      const sentAt = Date.now()
      const response = await post(collector.url, batchText(70_100, 20))
      expect([response.status, response.headers.get('retry-after')]).toEqual([503, '5'])
      expect(await response.json()).toMatchObject({ error: { code: 'QUEUE_UNAVAILABLE', message: 'The queue server did not answer within 5 s. Retry later.' } })
      expect(Date.now() - sentAt).toBeLessThan(5_000 + 2_000)
      const signalledAt = Date.now()
      const exit = await stop(collector)
      expect(exit.code).toBe(0)
      // The drain timeout + 1 s for collector.close(), after this harness's server.close(100)
      // (the CLI spends one budget on both).
      expect(exit.at - signalledAt).toBeLessThanOrEqual(100 + 1_000 + 1_000)
      // close() itself leaves part of that second to the process's exit: taking all of it (its
      // bus waiting on the server gone), the process ended just past the bound under load.
      expect((exit.last as { closeMs: number }).closeMs).toBeLessThan(1_000 + 1_000)
    } finally {
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)

  it('PostgreSQL gone: a sender is answered 503 QUEUE_UNAVAILABLE with Retry-After (not a 500), and the failure is reported once, not per request', async () => {
    const postgres = await startPostgres()
    const receiver = await startReceiver(() => 200)
    try {
      const collector = await startCollector({ QUEUE: postgres.url, WEBHOOK: receiver.url })
      started.push(collector)
      expect(await send(collector.url, batchText(70_200, 20))).toBe(200)
      await postgres.stop()
      for (let i = 0; i < 3; i++) {
        const response = await post(collector.url, batchText(70_300 + 20 * i, 20))
        expect([response.status, response.headers.get('retry-after')]).toEqual([503, '5'])
        expect(await response.json()).toMatchObject({
          error: { code: 'QUEUE_UNAVAILABLE', message: expect.stringMatching(/^The queue server did not (take the deliveries \(.+\)|answer within 5 s)\. Retry later\.$/) },
        })
      }
      const reported = collector.stderr().split('\n').filter((line) => line.startsWith('collector error'))
      // So is GET /v1/stats (it was a 500 each time): bounded, and not reported again.
      for (let i = 0; i < 2; i++) {
        const stats = await fetch(`${collector.url}/v1/stats`, { headers: { authorization: 'Bearer admin-token-for-tests' } })
        expect([stats.status, stats.headers.get('retry-after')]).toEqual([503, '5'])
        expect(await stats.json()).toMatchObject({ error: { code: 'QUEUE_UNAVAILABLE' } })
      }
      // The write's failure once (and the server's going, as each connection saw it), not 3 times.
      expect(reported.filter((line) => /queue server: connect ECONNREFUSED/.test(line))).toHaveLength(1)
    } finally {
      await receiver.close()
      await postgres.stop()
    }
  }, 30_000)
})

describe('a write answered 503 that lands afterwards', () => {
  it('is counted pending once it lands (it is delivered all the same): the count does not drift below the backlog', async () => {
    const redis = await startRedis()
    // The first message is taken; the rest are answered 503, so they stay pending (retrying).
    const receiver = await startReceiver((payload) => (payload.messageId === 'm-73000' ? 200 : 503))
    const counters = new SharedState({ kind: 'redis', url: redis.url })
    try {
      const collector = await startCollector({ QUEUE: redis.url, WEBHOOK: receiver.url })
      started.push(collector)
      expect(await send(collector.url, batchText(73_000, 1))).toBe(200)
      await until(() => receiver.accepted.length === 1, 'the first delivered')
      redis.freeze(true)
      // Held for the 5 s bound, then answered 503; the write is still on its way.
      expect(await send(collector.url, batchText(73_100, 20))).toBe(503)
      redis.freeze(false)
      await until(() => new Set(receiver.attempts.slice(1).map((a) => a.messageId)).size === 20, 'the 20 written after their 503 attempted')
      // Pending: the 20 are in the server, waiting to be retried (it went to -20 when they settled).
      await until(async () => (await counters.read())['web|pending'] === 20, 'the 20 counted pending', 5_000, async () => `pending ${(await counters.read())['web|pending']}`)
    } finally {
      await counters.close()
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)
})

describe('a write answered 503 that lands afterwards, in GET /v1/stats', () => {
  it('is counted accepted once it lands, so the counters add up after the sender retries: accepted = forwarded + deduplicated', async () => {
    const redis = await startRedis()
    const receiver = await startReceiver(() => 200)
    try {
      const collector = await startCollector({ QUEUE: redis.url, WEBHOOK: receiver.url })
      started.push(collector)
      expect(await send(collector.url, batchText(74_000, 1))).toBe(200)
      await until(() => receiver.accepted.length === 1, 'the first delivered')
      redis.freeze(true)
      // Held for the 5 s bound, then answered 503; the write is still on its way, and lands.
      expect(await send(collector.url, batchText(74_100, 20))).toBe(503)
      redis.freeze(false)
      await until(() => receiver.accepted.length === 21, 'the 20 delivered after their 503')
      // The sender's retry: accepted again, its messages de-duplicated at delivery.
      expect(await send(collector.url, batchText(74_100, 20))).toBe(200)
      let stats: Record<string, number> = {}
      const settled = async () => {
        stats = await collector.stats()
        return stats.pending === 0 && stats.deduplicated === 20 && stats.accepted === 41
      }
      await until(settled, 'the retry de-duplicated and every count written', 10_000, () => JSON.stringify(stats))
      expect(await collector.stats()).toMatchObject({ accepted: 41, forwarded: 21, deduplicated: 20, skipped: 0, blocked: 0, failed: 0, pending: 0 })
      expect(receiver.accepted).toHaveLength(21)
    } finally {
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)
})

describe('a full queue server', () => {
  it('Redis at its maxmemory (noeviction) refuses the write: senders are answered 503 QUEUE_UNAVAILABLE, the refusal reported once', async () => {
    const redis = await startRedis()
    try {
      const collector = await startCollector({ QUEUE: redis.url, WEBHOOK: 'http://127.0.0.1:9/hook' })
      started.push(collector)
      const admin = new (await loadRedis())(redis.url)
      await admin.config('SET', 'maxmemory-policy', 'noeviction')
      await admin.config('SET', 'maxmemory', '3mb')
      await admin.quit()
      const big = 'x'.repeat(20_000)
      const statuses: number[] = []
      let refusal: unknown
      for (let i = 0; i < 60 && !statuses.includes(503); i++) {
        const batch = Array.from({ length: 20 }, (_, j) => ({ type: 'track', event: 'E', userId: 'u', messageId: `full-${i}-${j}`, properties: { big } }))
        const response = await post(collector.url, JSON.stringify({ batch }))
        statuses.push(response.status)
        if (response.status !== 200) refusal = [response.status, response.headers.get('retry-after'), await response.json()]
      }
      expect(refusal).toMatchObject([503, '5', { error: { code: 'QUEUE_UNAVAILABLE', message: expect.stringMatching(/^The queue server did not take the deliveries \(OOM command not allowed/) } }])
      expect(new Set(statuses)).toEqual(new Set([200, 503]))
      const reported = collector.stderr().split('\n').filter((line) => /^collector error .*queue server: OOM/.test(line))
      expect(reported).toHaveLength(1)
    } finally {
      await redis.stop()
    }
  }, 30_000)
})

describe('shared counts a killed process left behind', () => {
  it('a pending count no job backs is set to 0 at start: the backlog limit does not refuse an empty queue', async () => {
    const redis = await startRedis()
    const receiver = await startReceiver(() => 200)
    try {
      // What a SIGKILL leaves when its last quarter-second of decrements was never written.
      const counters = new SharedState({ kind: 'redis', url: redis.url })
      counters.add('web|pending', 49)
      await counters.flush()
      await counters.close()
      const collector = await startCollector({ QUEUE: redis.url, WEBHOOK: receiver.url, MAX_PENDING: '40' })
      started.push(collector)
      expect(await send(collector.url, batchText(71_000, 20))).toBe(200)
      await until(() => receiver.accepted.length === 20, 'the batch delivered')
      await until(async () => (await collector.stats()).pending === 0, 'pending back to 0')
    } finally {
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)
})

describe('oncePer', () => {
  it('reports each distinct line once per window, however lines alternate', () => {
    let now = 0
    const realNow = Date.now
    Date.now = () => now
    try {
      const reportable = oncePer(10_000)
      const seen: string[] = []
      for (; now < 25_000; now += 250) for (const line of ['connection: ECONNREFUSED', 'worker: Connection is closed.']) if (reportable(line)) seen.push(`${now} ${line}`)
      expect(seen).toEqual([
        '0 connection: ECONNREFUSED', '0 worker: Connection is closed.',
        '10000 connection: ECONNREFUSED', '10000 worker: Connection is closed.',
        '20000 connection: ECONNREFUSED', '20000 worker: Connection is closed.',
      ])
    } finally {
      Date.now = realNow
    }
  })
})
