/**
 * The durable-mode tests, run once per queue server (Redis, PostgreSQL) against the same code:
 * collectors in child processes sharing one real server, a real receiver, SIGKILL and SIGTERM.
 */
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import type { QueueServerProcess } from '../../helpers/queue-servers.js'
import { tracedDeliveryReportsEachAttempt } from './traced.js'
import { addRetry, admin, batchText, onQueueServer, post, send, settledMarks, startReceiver, stop, until, waitingRetries, type CollectorProcess, type Received } from './support.js'

export function durableSuite(name: string, start: () => Promise<QueueServerProcess>): void {
  const server = onQueueServer(start)
  const collector = server.collector

  describe(`durable deliveries on ${name}`, () => {
    it('SIGKILL a collector holding 3,000 accepted deliveries (receiver down); another delivers every one, duplicates ≤ the attempts in flight at the kill', async () => {
      // Down (503) while the first collector takes the messages, then hanging: each attempt it
      // starts from then on stays open, so at the kill the attempts in flight are the requests
      // open at the receiver. A job starts its next attempt only once its previous one is
      // recorded in the server: with all four of them hanging, every earlier attempt is recorded.
      let phase: 'down' | 'hanging' | 'up' = 'down'
      let held = 0
      const receiver = await startReceiver(() => (phase === 'up' ? 200 : 503), () => (phase === 'hanging' ? (held++, 60_000) : 0))
      try {
        const a = await collector({ WEBHOOK: receiver.url, CONCURRENCY: '4' })
        for (let i = 0; i < 3000; i += 20) expect(await send(a.url, batchText(i, 20))).toBe(200)
        phase = 'hanging'
        await until(() => held >= 4 && receiver.open === 4, 'four attempts held open', 15_000, () => receiver.open)
        const inFlight = receiver.open
        await stop(a, 'SIGKILL')
        phase = 'down'
        const b = await collector({ WEBHOOK: receiver.url })
        phase = 'up'
        const arrived = () => new Set(receiver.accepted.map((r) => r.messageId)).size
        await until(() => arrived() === 3000, 'all 3,000 messages at the receiver', 30_000, arrived)
        // At-least-once: a receiver may have taken each request open at the kill (its answer
        // lost), so those count as received; each may arrive once more, nothing else.
        const duplicates = receiver.accepted.length + inFlight - 3000
        expect(duplicates).toBeLessThanOrEqual(inFlight)
        console.log(`durable/${name}: all 3,000 delivered after a SIGKILL, ${duplicates} duplicate(s), ${inFlight} attempt(s) in flight at the kill`)
        await until(async () => (await b.stats()).forwarded >= 3000, 'the shared stats to count them')
        await stop(b)
      } finally {
        await receiver.close()
      }
    }, 60_000)

    it('SIGKILL mid-delivery (receiver up): every message arrives; the delivered payloads of the killed batch job are not sent again', async () => {
      // One attempt at a time; the receiver answers the first 45 at once and holds the next one
      // open: the kill lands in the third batch job, 5 of its payloads delivered, the 6th in flight.
      const ours = (r: Received) => /^m-4\d{4}$/.test(r.messageId)
      let hang = true
      let seen = 0
      const receiver = await startReceiver(() => 200, (r) => (hang && ours(r) && ++seen > 45 ? 60_000 : 0))
      try {
        const a = await collector({ WEBHOOK: receiver.url, CONCURRENCY: '1' })
        for (let i = 0; i < 200; i += 20) expect(await send(a.url, batchText(40_000 + i, 20))).toBe(200)
        await until(() => seen > 45 && receiver.open === 1, 'the 46th attempt in flight')
        const inFlight = receiver.open
        expect(receiver.accepted.filter(ours).length).toBe(45)
        await stop(a, 'SIGKILL')
        hang = false
        await collector({ WEBHOOK: receiver.url })
        const arrived = () => new Set(receiver.accepted.filter(ours).map((r) => r.messageId)).size
        await until(() => arrived() === 200, 'all 200 messages at the receiver', 30_000, arrived)
        // The request open at the kill counts as received (the receiver may have taken it).
        const duplicates = receiver.accepted.filter(ours).length + inFlight - 200
        expect(duplicates).toBeLessThanOrEqual(inFlight)
        console.log(`durable/${name}: all 200 delivered after a SIGKILL mid-delivery, ${duplicates} duplicate(s), ${inFlight} attempt in flight at the kill`)
      } finally {
        await receiver.close()
      }
    }, 40_000)

    it('takes a batch larger than the whole backlog limit when nothing is pending; with a backlog, the limit holds', async () => {
      // The receiver holds every attempt open: what is taken stays pending. Its ids (m-96000…) are
      // no other test's: they stay claimed for de-duplication in the shared server.
      const receiver = await startReceiver(() => 200, () => 60_000)
      try {
        const a = await collector({ WEBHOOK: receiver.url, MAX_PENDING: '3' })
        expect(await send(a.url, batchText(96_000, 5))).toBe(200)
        const refused = await post(a.url, batchText(96_100, 5))
        expect(refused.status).toBe(503)
        expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('BACKLOG_FULL')
        await stop(a, 'SIGKILL')
      } finally {
        await receiver.close()
      }
    }, 30_000)

    it('a long run does not grow the process: its heap after 20,000 more deliveries is within 3 MB of what it was', async () => {
      const receiver = await startReceiver(() => 200)
      try {
        // No backlog limit: on a loaded machine deliveries may fall behind, and this is not about the 503.
        const a = await collector({ WEBHOOK: receiver.url, MAX_PENDING: '1000000' })
        // Ours: m-60000 to m-81999.
        const ours = () => new Set(receiver.accepted.map((r) => r.messageId).filter((id) => /^m-[678]\d{4}$/.test(id))).size
        const deliver = async (from: number, count: number) => {
          for (let i = from; i < from + count; i += 20) expect(await send(a.url, batchText(i, 20))).toBe(200)
          await until(() => ours() >= from + count - 60_000, `${from + count - 60_000} delivered`, 30_000, ours)
        }
        // Warm: code compiled, connections and pools open, the console's records at their bound.
        await deliver(60_000, 2_000)
        const before = await a.heap()
        await deliver(62_000, 20_000)
        const after = await a.heap()
        console.log(`durable/${name}: heap ${(before / 1e6).toFixed(1)} MB after 2,000 deliveries, ${(after / 1e6).toFixed(1)} MB after 22,000`)
        // A few hundred bytes kept per delivery would be several MB here.
        expect(after - before).toBeLessThan(3_000_000)
      } finally {
        await receiver.close()
      }
    }, 90_000)

    it('a traced delivery reports each attempt, the retry and the outcome, first attempt included; none starts before the saved settings are applied', async () => {
      await tracedDeliveryReportsEachAttempt(server.url)
    }, 30_000)

    it('two processes under load: every message delivered once, signed, int64 digits kept; a re-sent batch is de-duplicated across processes', async () => {
      // Each answer takes 5 ms: the jobs outlast one process's slots, so the other takes its share
      // even on a loaded machine (answered at once, the first process to poll could drain them all).
      const receiver = await startReceiver(() => 200, () => 5)
      try {
        const [a, b] = await Promise.all([collector({ WEBHOOK: receiver.url }), collector({ WEBHOOK: receiver.url })])
        const before = await a.stats()
        const marksBefore = await settledMarks(server.url)
        const sends: Promise<number>[] = []
        for (let i = 0; i < 1000; i += 20) sends.push(send(i % 40 === 0 ? a.url : b.url, batchText(10_000 + i, 20)))
        expect(new Set(await Promise.all(sends))).toEqual(new Set([200]))
        await until(() => receiver.accepted.length >= 1000, '1,000 deliveries')
        // A client retrying batches the other process already accepted and delivered (an
        // ambiguous failure): answered 200, never forwarded again.
        for (let i = 0; i < 100; i += 20) expect(await send(i % 40 === 0 ? b.url : a.url, batchText(10_000 + i, 20))).toBe(200)
        await until(async () => (await b.stats()).deduplicated - before.deduplicated === 100, '100 counted as deduplicated')
        await new Promise((r) => setTimeout(r, 300))
        const ids = receiver.accepted.map((r) => r.messageId)
        expect(ids.length).toBe(1000)
        expect(new Set(ids).size).toBe(1000)
        expect(receiver.accepted.every((r) => r.signatureValid)).toBe(true)
        expect(receiver.accepted.every((r) => r.raw.includes('"total":9223372036854775807'))).toBe(true)
        const stats = await a.stats()
        expect(stats.forwarded - before.forwarded).toBe(1000)
        expect(stats.accepted - before.accepted).toBe(1100)
        // Each completed batch job's settled marks are dropped from the server.
        await until(async () => (await settledMarks(server.url)) <= marksBefore, 'the settled marks to be dropped')
        // Each process's own count (its drain report): the deliveries were spread over both.
        const [exitA, exitB] = await Promise.all([stop(a), stop(b)])
        const own = (exit: { last: unknown }) => (exit.last as { report: { stats: { forwarded: number } } }).report.stats.forwarded
        expect(own(exitA)).toBeGreaterThan(0)
        expect(own(exitB)).toBeGreaterThan(0)
        expect(own(exitA) + own(exitB)).toBe(1000)
      } finally {
        await receiver.close()
      }
    }, 60_000)

    it('a retry scheduled before a restart fires after it, inside the retry window measured from the first attempt', async () => {
      // The first answer asks for 3 s (Retry-After): the kill comes once the retry is in the server
      // and well before it is due, so no attempt is in flight at the kill.
      const receiver = await startReceiver(() => 503, () => 0, () => (receiver.attempts.length === 1 ? 3 : undefined))
      try {
        const a = await collector({ WEBHOOK: receiver.url, RETRY_WINDOW: '6000' })
        const before = await a.stats()
        expect(await send(a.url, batchText(20_000, 1))).toBe(200)
        await until(() => receiver.attempts.length >= 1, 'the first attempt')
        await until(async () => (await waitingRetries(server.url, 'm-20000')) === 1, 'the retry in the queue server')
        expect(Date.now() - receiver.attempts[0].at).toBeLessThan(3000)
        await stop(a, 'SIGKILL')
        const restartedAt = Date.now()
        const b = await collector({ WEBHOOK: receiver.url, RETRY_WINDOW: '6000', DEBUG: 'analytics:collector' })
        const attempts = () => `attempts at ${receiver.attempts.map((r) => r.at - restartedAt).join(', ')} ms from the restart`
        await until(async () => (await b.stats()).failed - before.failed === 1, 'the delivery to fail for good', 20_000, attempts)
        const times = receiver.attempts.map((r) => r.at)
        expect(times.length).toBeGreaterThan(1)
        // The retry kept its time: not before the 3 s asked for, and made by the new process.
        expect(times[1] - times[0]).toBeGreaterThanOrEqual(3000)
        expect(times[1]).toBeGreaterThan(restartedAt)
        // Not restarted from zero: every attempt falls inside 6 s (+ one attempt's time) of the first.
        expect(times[times.length - 1] - times[0]).toBeLessThan(6000 + 1000)
        // Its log says the window, not the receiver's answer, ended the retrying. A retry due just
        // inside the window and taken a few ms after (by this running collector) is attempted, not
        // failed unattempted as one that came due while no collector ran (the next test).
        expect(b.stderr()).toMatch(/web: \w+ failed after \d+ attempts: .*; no retry: (the next would start|its Retry-After reaches) past the retry window \(6 seconds from the first attempt\)\./)
        expect(b.stderr()).not.toMatch(/ended before it could start/)
        await stop(b)
      } finally {
        await receiver.close()
      }
    }, 45_000)

    it('Standard Webhooks signatures: a retry made by another process keeps the webhook-id, with its own timestamp', async () => {
      const standardSecret = `whsec_${Buffer.from('durable standard webhooks secret').toString('base64')}`
      const receiver = await startReceiver(() => (receiver.attempts.length === 1 ? 503 : 200), () => 0, () => (receiver.attempts.length === 1 ? 2 : undefined))
      try {
        const a = await collector({ WEBHOOK: receiver.url, STANDARD_SECRET: standardSecret })
        expect(await send(a.url, batchText(21_000, 1))).toBe(200)
        await until(async () => (await waitingRetries(server.url, 'm-21000')) === 1, 'the retry in the queue server')
        await stop(a, 'SIGKILL')
        await collector({ WEBHOOK: receiver.url, STANDARD_SECRET: standardSecret })
        await until(() => receiver.accepted.length === 1, 'the retry, by the second process')
        const [first, second] = receiver.attempts
        expect(second.raw).toBe(first.raw)
        expect(second.headers['webhook-id']).toBe(first.headers['webhook-id'])
        expect(Number(second.headers['webhook-timestamp'])).toBeGreaterThan(Number(first.headers['webhook-timestamp']))
        for (const attempt of [first, second]) {
          expect(attempt.signatureValid).toBe(true)
          expect(new Webhook(standardSecret).verify(attempt.raw, attempt.headers as Record<string, string>)).toMatchObject({ messageId: 'm-21000' })
        }
      } finally {
        await receiver.close()
      }
    }, 30_000)

    it('a retry that came due while no collector ran, and can only start past the retry window, fails for good without an attempt', async () => {
      // Retry-After 2 s inside a 4 s window: due at ~2 s, while no collector runs; the next one
      // starts at ~4.5 s, past the window.
      const receiver = await startReceiver(() => 503, () => 0, () => (receiver.attempts.length === 1 ? 2 : undefined))
      try {
        const a = await collector({ WEBHOOK: receiver.url, RETRY_WINDOW: '4000' })
        const before = await a.stats()
        expect(await send(a.url, batchText(22_000, 1))).toBe(200)
        await until(() => receiver.attempts.length >= 1, 'the first attempt')
        await until(async () => (await waitingRetries(server.url, 'm-22000')) === 1, 'the retry in the queue server')
        await stop(a, 'SIGKILL')
        await until(() => Date.now() - receiver.attempts[0].at > 4500, 'the retry window to end', 10_000)
        const b = await collector({ WEBHOOK: receiver.url, RETRY_WINDOW: '4000', DEBUG: 'analytics:collector' })
        await until(async () => (await b.stats()).failed - before.failed === 1, 'the delivery to fail for good', 15_000)
        expect(receiver.attempts.map((r) => r.messageId)).toEqual(['m-22000'])
        expect(b.stderr()).toMatch(/web: track failed after 1 attempt: no retry: the retry window \(4 seconds from the first attempt\) ended before it could start \(\d+\.\d s after the first attempt\)\./)
        await until(async () => (await b.stats()).retrying === before.retrying, 'no longer counted retrying')
        await stop(b)
      } finally {
        await receiver.close()
      }
    }, 30_000)

    it('a retry due inside its window is attempted when taken as it came due, though the window ended meanwhile; one taken over a second late is not', async () => {
      const receiver = await startReceiver(() => 200)
      try {
        const a = await collector({ WEBHOOK: receiver.url, RETRY_WINDOW: '6000', DEBUG: 'analytics:collector' })
        const before = await a.stats()
        // Both first attempted 10 s ago: a 6 s window that ended 4 s ago.
        const firstAt = Date.now() - 10_000
        await addRetry(server.url, 'm-prompt', firstAt, Date.now() + 300)
        await addRetry(server.url, 'm-stale', firstAt, Date.now() - 2_000)
        await until(() => receiver.accepted.length === 1, 'the prompt retry to arrive')
        await until(async () => (await a.stats()).failed - before.failed === 1, 'the stale retry to fail')
        expect(receiver.attempts.map((r) => r.messageId)).toEqual(['m-prompt'])
        expect(a.stderr()).toMatch(/web: track failed after 1 attempt: no retry: the retry window \(6 seconds from the first attempt\) ended before it could start \(1\d\.\d s after the first attempt\)\./)
        await stop(a)
      } finally {
        await receiver.close()
      }
    }, 30_000)

    it('SIGTERM: exits within the drain timeout + 1 s and leaves the rest in the server for the next process', async () => {
      let slow = true
      const receiver = await startReceiver(() => 200, () => (slow ? 3000 : 0))
      try {
        const a = await collector({ WEBHOOK: receiver.url, DRAIN: '1000' })
        for (let i = 0; i < 500; i += 20) expect(await send(a.url, batchText(30_000 + i, 20))).toBe(200)
        await until(() => receiver.attempts.length > 0, 'attempts in flight')
        const signalledAt = Date.now()
        const exit = await stop(a)
        expect(exit.code).toBe(0)
        expect(exit.at - signalledAt).toBeLessThanOrEqual(1000 + 1000)
        slow = false
        await collector({ WEBHOOK: receiver.url })
        const ours = () => receiver.accepted.filter((r) => /^m-3\d{4}$/.test(r.messageId))
        await until(() => new Set(ours().map((r) => r.messageId)).size === 500, 'all 500 delivered by the next process')
        // The attempts given up at the bound were never answered (their sender gone): none arrives twice.
        await new Promise((r) => setTimeout(r, 300))
        expect(ours().length).toBe(500)
      } finally {
        await receiver.close()
      }
    }, 40_000)

    it('an audience diff is taken against the previous sync after a restart', async () => {
      const receiver = await startReceiver(() => 200)
      try {
        const a = await collector({ WEBHOOK: receiver.url })
        const first = await admin(a.url, '/v1/audiences', { source: 'web', audience: 'VIP', members: ['u1', 'u2'] })
        expect(first.status).toBe(200)
        // Only this test's payloads (a process of an earlier test may hand back an attempt it held).
        const synced = () => receiver.accepted.filter((r) => r.raw.includes('"traits":{"vip"'))
        await until(() => synced().length === 2, 'the first sync')
        await stop(a)
        const b = await collector({ WEBHOOK: receiver.url })
        const second = await admin(b.url, '/v1/audiences', { source: 'web', audience: 'VIP', members: ['u2', 'u3'] })
        expect(second.status).toBe(200)
        await until(() => synced().length === 4, 'the second sync')
        const changes = Object.fromEntries(synced().slice(2).map((r) => {
          const payload = JSON.parse(r.raw) as { userId: string; traits: Record<string, boolean> }
          return [payload.userId, payload.traits.vip]
        }))
        expect(changes).toEqual({ u1: false, u3: true })
        await stop(b)
      } finally {
        await receiver.close()
      }
    }, 30_000)

    it('admin requests with the backlog full: nothing answered 200 before it is in the server; a sync cut short remembers what it queued, a SIGTERM loses nothing', async () => {
      // The receiver holds every attempt open until `up`: what is queued stays pending.
      let up = false
      const receiver = await startReceiver(() => 200, () => (up ? 0 : 60_000))
      try {
        const a = await collector({ WEBHOOK: receiver.url, MAX_PENDING: '3' })
        const members = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7']
        // Chunks of 3 (the limit): the first is taken (nothing pending), the rest finds no room.
        const cut = await admin(a.url, '/v1/audiences', { source: 'web', audience: 'Partial', members })
        expect(cut.status).toBe(503)
        expect(cut.headers.get('retry-after')).toBe('5')
        expect(((await cut.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'BACKLOG_FULL', message: expect.stringContaining('4 of its 7 payloads not queued (too many deliveries pending') })
        // A deletion waiting for room when the collector is stopped is not answered 200.
        const waiting = admin(a.url, '/v1/deletions', { userId: 'gone-1' }).then((r) => r.status, () => 'no answer')
        await new Promise((r) => setTimeout(r, 500))
        await stop(a)
        expect(await waiting).not.toBe(200)
        up = true
        const b = await collector({ WEBHOOK: receiver.url })
        // Sent again as told: only what the first one did not queue.
        const again = await admin(b.url, '/v1/audiences', { source: 'web', audience: 'Partial', members })
        expect(await again.json()).toEqual({ success: true, sources: ['web'], sent: 4 })
        expect(await (await admin(b.url, '/v1/deletions', { userId: 'gone-1' })).json()).toEqual({ success: true, sources: ['web'], sent: 1 })
        const synced = () => new Set(receiver.accepted.filter((r) => r.raw.includes('"traits":{"partial":true}')).map((r) => (JSON.parse(r.raw) as { userId: string }).userId))
        const deleted = () => receiver.accepted.some((r) => r.raw.includes('"type":"delete"') && r.raw.includes('"gone-1"'))
        await until(() => synced().size === 7 && deleted(), 'every member and the deletion delivered', 20_000, () => [...synced()].join())
        await stop(b)
      } finally {
        await receiver.close()
      }
    }, 45_000)

    it('two syncs of one audience sent at once to one process take turns: the second diffs against the first', async () => {
      const receiver = await startReceiver(() => 200)
      try {
        const a = await collector({ WEBHOOK: receiver.url })
        const sync = (members: string[]) => admin(a.url, '/v1/audiences', { source: 'web', audience: 'Gold', members })
        // Which one the collector reads first is not fixed; either way the other one diffs
        // against it (at the same time, each would diff against nothing: u1 twice, no removal).
        const answers = await Promise.all([sync(['u1', 'u2']), sync(['u1', 'u3'])])
        expect(await Promise.all(answers.map((r) => r.json()))).toEqual([
          { success: true, sources: ['web'], sent: 2 },
          { success: true, sources: ['web'], sent: 2 },
        ])
        const synced = () => receiver.accepted.filter((r) => r.raw.includes('"traits":{"gold"'))
        await until(() => synced().length === 4, 'both syncs')
        // (Each sync's payloads, in whatever order their jobs' attempts went.)
        const sent = synced().map((r) => {
          const payload = JSON.parse(r.raw) as { userId: string; traits: Record<string, boolean> }
          return `${payload.userId}=${payload.traits.gold}`
        })
        expect([
          ['u1=true', 'u2=false', 'u2=true', 'u3=true'],
          ['u1=true', 'u2=true', 'u3=false', 'u3=true'],
        ]).toContainEqual(sent.sort())
        await stop(a)
      } finally {
        await receiver.close()
      }
    }, 30_000)
  })
}
