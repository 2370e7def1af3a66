/**
 * The console with a queue server, run once per server (Redis, PostgreSQL) against the same code:
 * collector processes (collector-process.mjs, on dist/) sharing one real server. Settings changed
 * through one process's admin endpoint reach the others and survive a restart (a masked header
 * value or secret sent back keeps the real one, in the server too; a change made from settings
 * read before another process's change is refused, 409, by every process); a delivery
 * accepted by one process and attempted by another shows its attempts in both consoles, and so
 * do a deletion request's and an audience sync's payloads.
 */
import { describe, expect, it } from 'vitest'
import type { QueueServerProcess } from '../../helpers/queue-servers.js'
import { startSigningReceiver } from '../../helpers/signing-receiver.js'
import { batchText, onQueueServer, send, startReceiver, stop, until, type CollectorProcess } from './support.js'

const NEW_SECRET = 'a-new-shared-secret-for-the-queue'

interface MessageRecord {
  id: string
  type: string
  name?: string
  userId?: string
  origin?: string
  remote?: true
  message: { messageId?: string }
  delivery: { outcome: string; reason?: string; attempts: Array<{ attempt: number; results: Array<{ url: string; status?: number; error?: string }> }> }
}

function request(collector: CollectorProcess, path: string, init: { method?: string; body?: unknown; ifMatch?: string } = {}) {
  return fetch(`${collector.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: 'Bearer admin-token-for-tests', 'content-type': 'application/json', ...(init.ifMatch && { 'if-match': init.ifMatch }) },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  })
}

async function sources(collector: CollectorProcess) {
  const answer = (await (await request(collector, '/v1/admin/sources')).json()) as {
    settings: { store: string; durable: boolean; notice?: string }
    sources: Array<{ name: string; version: string; webhooks: { enabled: boolean; urls: Array<{ url: string; headers?: Record<string, string> }>; sharedSecret: string | null } }>
  }
  const web = answer.sources.find((s) => s.name === 'web')!
  return { settings: answer.settings, web: web.webhooks, version: `"${web.version}"` }
}

async function messages(collector: CollectorProcess): Promise<MessageRecord[]> {
  return ((await (await request(collector, '/v1/admin/messages?limit=500')).json()) as { messages: MessageRecord[] }).messages
}

/**
 * Waits until each process hears the bus: its first request waits for that (a notice published
 * before a process is subscribed does not reach it: at most once).
 */
async function listening(...collectors: CollectorProcess[]) {
  await Promise.all(collectors.map(sources))
}

const byMessageId = (records: MessageRecord[], prefix: string) => records.filter((r) => r.message.messageId?.startsWith(prefix))

export function durableConsoleSuite(name: string, start: () => Promise<QueueServerProcess>): void {
  const server = onQueueServer(start)
  const collector = server.collector

  describe(`the console on ${name}`, () => {
    it('a message accepted by one process shows the attempts any process made, in every console', async () => {
      // A little slow, one attempt at a time each: both processes take a share of the deliveries.
      const receiver = await startReceiver(() => 200, () => 20)
      try {
        const [a, b] = await Promise.all([collector({ WEBHOOK: receiver.url, CONCURRENCY: '1' }), collector({ WEBHOOK: receiver.url, CONCURRENCY: '1' })])
        await listening(a, b)
        for (let i = 0; i < 60; i += 20) expect(await send(a.url, batchText(200 + i, 20))).toBe(200)
        const delivered = async (c: CollectorProcess) => byMessageId(await messages(c), 'm-2').filter((r) => r.delivery.outcome === 'delivered')
        await until(async () => (await delivered(a)).length === 60, "A's console to show the 60 deliveries", 30_000)
        for (const record of await delivered(a)) {
          expect(record.remote).toBeUndefined()
          expect(record.delivery.attempts).toEqual([{ attempt: 1, at: expect.any(String), results: [{ url: receiver.url, status: 200, durationMs: expect.any(Number) }] }])
        }
        // B's console lists the messages A accepted, with the same outcome.
        await until(async () => (await delivered(b)).length === 60, "B's console to show them too")
        expect((await delivered(b)).every((r) => r.remote === true)).toBe(true)
        // B made some of those attempts: A's console shows attempts made in another process.
        const exitB = await stop(b)
        expect((exitB.last as { report: { stats: { forwarded: number } } }).report.stats.forwarded).toBeGreaterThan(0)
      } finally {
        await receiver.close()
      }
    }, 60_000)

    it('a failing URL shows its retries and the outcome; a retry by hand goes through the queue server and continues the numbering', async () => {
      let status = 503
      const receiver = await startReceiver(() => status)
      try {
        const env = { WEBHOOK: receiver.url, RETRY_WINDOW: '2500' }
        const [a, b] = await Promise.all([collector(env), collector(env)])
        await listening(a, b)
        const before = await a.stats()
        expect(await send(a.url, batchText(300, 1))).toBe(200)
        const record = async (c: CollectorProcess) => byMessageId(await messages(c), 'm-300')[0]
        await until(async () => (await record(a))?.delivery.outcome === 'failed', 'the delivery to fail for good', 20_000)
        const failed = await record(a)
        const tries = failed.delivery.attempts.length
        expect(tries).toBeGreaterThanOrEqual(2)
        expect(failed.delivery.attempts.map((t) => t.attempt)).toEqual(Array.from({ length: tries }, (_, i) => i + 1))
        expect(failed.delivery.attempts.every((t) => t.results[0].status === 503)).toBe(true)
        const activity = (await (await request(a, '/v1/admin/activity')).json()) as { minutes: Array<{ retrying: number; failed: number }> }
        expect(activity.minutes.reduce((n, m) => n + m.retrying, 0)).toBe(tries - 1)
        await until(async () => (await record(b))?.delivery.outcome === 'failed', "B's console to show the failure")

        status = 200
        // Retried by hand through both processes at once: one is sent, the other refused (it has
        // heard of the retry by then, or it loses the claim in the queue server).
        const retries = await Promise.all([
          request(a, `/v1/admin/messages/${failed.id}/retry`, { method: 'POST' }),
          request(b, `/v1/admin/messages/${(await record(b)).id}/retry`, { method: 'POST' }),
        ])
        expect(retries.map((r) => r.status).sort()).toEqual([202, 409])
        const refused = (await retries.find((r) => r.status === 409)!.json()) as { error: { message: string } }
        expect(refused.error.message).toMatch(/is already being retried|has not failed \(its delivery is (queued|delivered)\)/)
        await until(async () => (await record(a)).delivery.outcome === 'delivered', 'the retry by hand to deliver')
        expect((await record(a)).delivery.attempts.at(-1)).toMatchObject({ attempt: tries + 1, results: [{ status: 200 }] })
        await until(async () => (await record(b)).delivery.outcome === 'delivered', "B's console to show it delivered")
        expect((await record(b)).delivery.attempts.at(-1)?.attempt).toBe(tries + 1)
        expect(receiver.accepted).toHaveLength(1)
        expect(receiver.accepted[0].signatureValid).toBe(true)
        // Shared stats: the message left `failed` when retried, and counts as forwarded.
        await until(async () => {
          const now = await b.stats()
          return now.failed === before.failed && now.forwarded === before.forwarded + 1
        }, 'the stats to count it forwarded, not failed')
        // Each process's own counts are what it did: the failure stays counted where it was made.
        const own = await Promise.all([a.localStats(), b.localStats()])
        expect(own.map((s) => s.failed).sort()).toEqual([0, 1])
        expect(own[0].forwarded + own[1].forwarded).toBe(1)
      } finally {
        await receiver.close()
      }
    }, 60_000)

    it('with two URLs, the one answering after the other accepted the message shows its own status in every console (a late 400), not "still answering"', async () => {
      // The second URL answers 400 a little after the first one's 200: the attempt has settled.
      const fast = await startReceiver(() => 200)
      const slow = await startReceiver(() => 400, () => 300)
      try {
        const env = { WEBHOOK: fast.url, WEBHOOK2: slow.url }
        const [a, b] = await Promise.all([collector(env), collector(env)])
        await listening(a, b)
        expect(await send(a.url, batchText(500, 1))).toBe(200)
        const record = async (c: CollectorProcess) => byMessageId(await messages(c), 'm-500')[0]
        const answered = [{ url: fast.url, status: 200 }, { url: slow.url, status: 400, error: expect.stringContaining('answered 400') }]
        for (const c of [a, b]) {
          await until(async () => (await record(c))?.delivery.attempts[0]?.results[1]?.status === 400, 'the late 400, in each console', 10_000)
          expect((await record(c)).delivery).toMatchObject({ outcome: 'delivered', attempts: [{ attempt: 1, results: answered }] })
          expect((await record(c)).delivery.attempts).toHaveLength(1)
        }
        expect([fast.attempts.length, slow.attempts.length]).toEqual([1, 1])
      } finally {
        await Promise.all([fast.close(), slow.close()])
      }
    }, 60_000)

    it('a late outcome that comes while the process that made the attempt is closing still reaches the other consoles (close waits for it within its drain timeout)', async () => {
      const fast = await startReceiver(() => 200)
      const slow = await startReceiver(() => 400, () => 2_000)
      try {
        const env = { WEBHOOK: fast.url, WEBHOOK2: slow.url, DRAIN: '5000' }
        const [a, b] = await Promise.all([collector(env), collector(env)])
        await listening(a, b)
        expect(await send(a.url, batchText(550, 1))).toBe(200)
        // The process that made the attempt (the one that counts it forwarded) stops while the
        // slow URL is still answering.
        let own: Array<Record<string, number>> = []
        await until(async () => {
          own = await Promise.all([a.localStats(), b.localStats()])
          return own[0].forwarded + own[1].forwarded === 1
        }, 'the fast URL to accept it, counted where the attempt was made')
        const [attempter, other] = own[0].forwarded === 1 ? [a, b] : [b, a]
        await until(() => slow.open === 1, 'the slow URL to be answering')
        const exit = await stop(attempter)
        expect(exit.code).toBe(0)
        const record = async (c: CollectorProcess) => byMessageId(await messages(c), 'm-550')[0]
        await until(async () => (await record(other))?.delivery.attempts[0]?.results[1]?.status === 400, "the late 400, in the other process's console", 5_000)
        expect((await record(other)).delivery).toMatchObject({ outcome: 'delivered', attempts: [{ attempt: 1, results: [{ url: fast.url, status: 200 }, { url: slow.url, status: 400 }] }] })
      } finally {
        await Promise.all([fast.close(), slow.close()])
      }
    }, 60_000)

    it("a deletion request's payload shows its attempts and outcome in every console, and is retried by hand from another process; an audience sync's identifies are shown as such", async () => {
      let status = 503
      const receiver = await startReceiver((p) => (JSON.parse(p.raw).type === 'delete' ? status : 200))
      try {
        const env = { WEBHOOK: receiver.url, RETRY_WINDOW: '2500' }
        const [a, b] = await Promise.all([collector(env), collector(env)])
        await listening(a, b)
        const deletion = await request(a, '/v1/deletions', { method: 'POST', body: { userId: 'erased-user' } })
        expect(await deletion.json()).toMatchObject({ success: true, sources: ['web'], sent: 1 })
        const record = async (c: CollectorProcess) => (await messages(c)).find((r) => r.type === 'delete' && r.userId === 'erased-user')
        await until(async () => (await record(a))?.delivery.outcome === 'failed', 'the deletion to fail for good', 20_000)
        const failed = (await record(a))!
        expect(failed.origin).toBe('deletion')
        const tries = failed.delivery.attempts.length
        expect(tries).toBeGreaterThanOrEqual(2)
        expect(failed.delivery.attempts.every((t) => t.results[0].status === 503)).toBe(true)
        await until(async () => (await record(b))?.delivery.outcome === 'failed', "B's console to show the failure")
        expect((await record(b))).toMatchObject({ remote: true, origin: 'deletion' })

        // Retried by hand from B, the process that did not accept it: every console follows it.
        status = 200
        const remote = (await record(b))!
        expect((await request(b, `/v1/admin/messages/${remote.id}/retry`, { method: 'POST' })).status).toBe(202)
        for (const c of [a, b]) {
          await until(async () => (await record(c))?.delivery.outcome === 'delivered', 'the retry by hand to deliver, in each console')
          expect((await record(c))!.delivery.attempts.at(-1)).toMatchObject({ attempt: tries + 1, results: [{ status: 200 }] })
        }
        expect(receiver.accepted.map((p) => JSON.parse(p.raw) as { type: string; userId: string })).toEqual([
          expect.objectContaining({ type: 'delete', userId: 'erased-user' }),
        ])

        const sync = await request(a, '/v1/audiences', { method: 'POST', body: { source: 'web', audience: 'Durable Fans', members: ['u-1', 'u-2'] } })
        expect(await sync.json()).toMatchObject({ sent: 2 })
        const fans = async (c: CollectorProcess) => (await messages(c)).filter((r) => r.origin === 'audience' && r.name === 'Durable Fans' && r.delivery.outcome === 'delivered')
        for (const c of [a, b]) await until(async () => (await fans(c)).length === 2, 'the audience identifies delivered, in each console')
        expect((await fans(b)).map((r) => [r.type, r.userId])).toEqual([['identify', 'u-2'], ['identify', 'u-1']])
      } finally {
        await receiver.close()
      }
    }, 60_000)

    // The settings it saves in the server are dropped after it (`onQueueServer`), as after every test.
    it('settings changed through one process apply to the next message of another, survive a restart; an invalid change changes nothing anywhere', async () => {
      const before = await startReceiver(() => 200)
      const after = await startSigningReceiver({ secret: NEW_SECRET })
      try {
        const [a, b] = await Promise.all([collector({ WEBHOOK: before.url }), collector({ WEBHOOK: before.url })])
        expect((await sources(a)).settings).toEqual({ store: 'queue', durable: true })
        const stale = (await sources(b)).version
        expect((await sources(a)).version).toBe(stale)
        const change = { urls: [{ url: after.url, headers: { 'X-Team': 'growth' } }], sharedSecret: NEW_SECRET }
        const put = await request(a, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: change })
        expect(put.status).toBe(200)
        expect(await put.json()).toMatchObject({ success: true, persisted: true })
        // B hears of it on the bus and applies it (shown by its own admin endpoint).
        await until(async () => (await sources(b)).web.urls[0]?.url === after.url, 'B to apply the change')
        const shown = { enabled: true, urls: [{ url: after.url, headers: { 'X-Team': '••••' } }], sharedSecret: `••••${NEW_SECRET.slice(-4)}` }
        expect((await sources(b)).web).toEqual(shown)
        // A change made from the settings read before (a stale tab) is refused by either process, and changes nothing.
        for (const c of [a, b]) {
          const refused = await request(c, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: { enabled: false }, ifMatch: stale })
          expect(refused.status).toBe(409)
          expect(await refused.json()).toMatchObject({ error: { code: 'CONFLICT' } })
        }
        expect((await sources(a)).web).toEqual(shown)
        // B is sent back its settings as read, masked: it keeps the values they stand for, and so does the server.
        const again = await request(b, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: shown, ifMatch: (await sources(b)).version })
        expect(await again.json()).toMatchObject({ success: true, persisted: true, source: { webhooks: shown } })
        // Only B takes jobs now: its next message goes to the new URL, with the header, signed with the new secret.
        await stop(a)
        expect(await send(b.url, batchText(100, 1))).toBe(200)
        await until(() => after.accepted.length === 1, 'the delivery to the new URL')
        expect(after.accepted[0].signatureValid).toBe(true)
        expect(after.accepted[0].headers['x-team']).toBe('growth')
        expect(before.attempts).toHaveLength(0)
        await stop(b)

        // A restart (its config still names the old URL) starts with the saved settings.
        const c = await collector({ WEBHOOK: before.url })
        expect((await sources(c)).web.urls).toEqual(shown.urls)
        expect(await send(c.url, batchText(101, 1))).toBe(200)
        await until(() => after.accepted.length === 2, 'the delivery after the restart')
        expect(after.accepted[1].signatureValid).toBe(true)
        expect(after.accepted[1].headers['x-team']).toBe('growth')

        // An invalid change: the config's error, and nothing changes here, in the server or elsewhere.
        const invalid = await request(c, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: after.url }, { url: 'ftp://example.com/hook' }] } })
        expect(invalid.status).toBe(400)
        expect(await invalid.json()).toMatchObject({ success: false, error: { code: 'VALIDATION', field: 'sources[0].webhooks.urls[1].url' } })
        expect((await sources(c)).web.urls).toEqual(shown.urls)
        const d = await collector({ WEBHOOK: before.url })
        expect((await sources(d)).web.urls).toEqual(shown.urls)
        expect(before.attempts).toHaveLength(0)
      } finally {
        await Promise.all([before.close(), after.close()])
      }
    }, 60_000)
  })
}
