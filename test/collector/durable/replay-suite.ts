/**
 * Replay with a queue server, run once per server (Redis, PostgreSQL) against the same code:
 * collector processes (collector-process.mjs, on dist/) sharing one real server. A payload one
 * process delivered (or failed to) is kept in the server, and another process replays it: the
 * same bytes, `X-Signature` and `webhook-id`, marked `replay: true` in every console, kept again
 * with its new outcome; `url` sends to one URL only; with a retention of 0 nothing is kept (a
 * replay is a 409). Past the retention (`unavailable`), with an injected clock:
 * test/collector/replay/kept-jobs.test.ts.
 */
import { describe, expect, it } from 'vitest'
import type { QueueServerProcess } from '../../helpers/queue-servers.js'
import { admin, batchText, jobsLeft, onQueueServer, send, startReceiver, until, type CollectorProcess, type Received } from './support.js'

const STANDARD = `whsec_${Buffer.from('durable replay standard webhooks secret').toString('base64')}`
const WIDE = { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' }
/** From now on: what earlier tests kept in the server (it outlives their jobs) is outside the window. */
const fromNow = () => ({ from: Date.now(), to: WIDE.to })

interface Record {
  replay?: true
  remote?: true
  message: { messageId?: string }
  delivery: { outcome: string; attempts: Array<{ results: Array<{ url: string; status?: number }> }> }
}

async function messages(collector: CollectorProcess): Promise<Record[]> {
  const response = await fetch(`${collector.url}/v1/admin/messages?limit=500`, { headers: { authorization: 'Bearer admin-token-for-tests' } })
  return ((await response.json()) as { messages: Record[] }).messages
}

async function replay(collector: CollectorProcess, body: object): Promise<{ status: number; body: { replaying?: number; unavailable?: number; error?: { field?: string; code?: string } } }> {
  const response = await admin(collector.url, '/v1/admin/replay', body)
  return { status: response.status, body: (await response.json()) as never }
}

const settled = (c: CollectorProcess, n: number) => until(async () => {
  const stats = await c.stats()
  return stats.pending === 0 && stats.forwarded + stats.failed >= n
}, `${n} deliveries settled`)

const ids = (received: Received[]) => received.map((r) => r.messageId).sort()

export function durableReplaySuite(name: string, start: () => Promise<QueueServerProcess>): void {
  const server = onQueueServer(start)
  const collector = server.collector

  describe(`replay on ${name}`, () => {
    it('another process replays what one process failed to deliver: the same bytes and webhook-id, marked as replays, kept again', async () => {
      let down = true
      const window = fromNow()
      const receiver = await startReceiver((p) => (down && ['m-1', 'm-3'].includes(p.messageId) ? 400 : 200))
      try {
        const env = { WEBHOOK: receiver.url, STANDARD_SECRET: STANDARD }
        const [a, b] = await Promise.all([collector(env), collector(env)])
        expect(await send(a.url, batchText(0, 5))).toBe(200)
        await settled(a, 5)
        expect(ids(receiver.accepted)).toEqual(['m-0', 'm-2', 'm-4'])
        const firstTries = receiver.attempts.filter((r) => r.messageId === 'm-1' || r.messageId === 'm-3')

        down = false
        // Kept in the server: B, which delivered none of them, replays them.
        expect(await replay(b, { source: 'web', ...window })).toEqual({ status: 202, body: { success: true, replaying: 2, unavailable: 0 } })
        await until(() => receiver.accepted.length === 5, 'the two replays delivered')
        for (const again of receiver.accepted.slice(3)) {
          const original = firstTries.find((r) => r.messageId === again.messageId)!
          expect(again.raw).toBe(original.raw)
          expect(again.signatureValid).toBe(true)
          expect(again.headers['x-signature']).toBe(original.headers['x-signature'])
          expect(again.headers['webhook-id']).toBe(original.headers['webhook-id'])
        }
        // Marked as replays, in the console of the process asked and of the other one.
        for (const c of [b, a]) {
          await until(async () => (await messages(c)).filter((m) => m.replay && m.delivery.outcome === 'delivered').length === 2, 'the replays listed as delivered')
        }
        // Kept again as delivered: no failed one left; all of them: five.
        await settled(a, 7)
        expect((await replay(a, { source: 'web', ...window })).body).toMatchObject({ replaying: 0, unavailable: 0 })
        expect((await replay(a, { source: 'web', ...window, outcome: 'all' })).body).toMatchObject({ replaying: 5, unavailable: 0 })
        await until(() => receiver.accepted.length === 10, 'the five replays delivered')
        expect(ids(receiver.accepted.slice(5))).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4'])
      } finally {
        await receiver.close()
      }
    }, 60_000)

    it('`url` sends to that URL only; the window bounds what is replayed; bad fields are 400s naming them', async () => {
      const first = await startReceiver(() => 200)
      const second = await startReceiver(() => 200)
      const window = fromNow()
      try {
        const c = await collector({ WEBHOOK: first.url, WEBHOOK2: second.url })
        expect(await send(c.url, batchText(10, 2))).toBe(200)
        await settled(c, 2)
        expect([first.accepted.length, second.accepted.length]).toEqual([2, 2])
        // The window bounds it: the earlier tests' payloads, still kept in the server, are not in it.
        expect((await replay(c, { source: 'web', ...window, outcome: 'all', url: second.url })).body).toMatchObject({ replaying: 2, unavailable: 0 })
        await until(() => second.accepted.length === 4, 'the replays at the second URL')
        expect(first.accepted).toHaveLength(2)
        const replays = (await messages(c)).filter((m) => m.replay)
        expect(replays.map((m) => m.delivery.attempts[0].results.map((r) => r.url))).toEqual([[second.url], [second.url]])
        expect(await replay(c, { source: 'web', ...WIDE, url: 'https://elsewhere.test/' })).toMatchObject({ status: 400, body: { error: { field: 'url' } } })
        expect(await replay(c, { source: 'web', from: WIDE.to, to: WIDE.from })).toMatchObject({ status: 400, body: { error: { field: 'from' } } })
      } finally {
        await first.close()
        await second.close()
      }
    }, 60_000)

    it('with a retention of 0, nothing is kept: a replay is a 409, and the server holds nothing of the window', async () => {
      const receiver = await startReceiver((p) => (p.messageId === 'm-21' ? 400 : 200))
      const window = fromNow()
      try {
        const c = await collector({ WEBHOOK: receiver.url, RETENTION: '0' })
        expect(await send(c.url, batchText(20, 3))).toBe(200)
        await settled(c, 3)
        // Its jobs are removed as they complete: none is left in the server.
        await until(async () => (await jobsLeft(server.url)) === 0, 'no job left in the server')
        expect(await replay(c, { source: 'web', ...window, outcome: 'all' })).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT' } } })
        // A process that keeps payloads finds none of them in the server, not even counted.
        const keeping = await collector({ WEBHOOK: receiver.url })
        expect((await replay(keeping, { source: 'web', ...window, outcome: 'all' })).body).toEqual({ success: true, replaying: 0, unavailable: 0 })
        expect(receiver.attempts).toHaveLength(3)
      } finally {
        await receiver.close()
      }
    }, 60_000)
  })
}
