/**
 * The embedded (memory) mode's share of the durable-collector issue: de-duplication by
 * (source, messageId), `GET /v1/stats`, and admin payloads that never push the backlog past
 * `maxPendingDeliveries`. (The queue-server mode: test/collector/durable/.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { RecentMessageIds } from '../../../src/collector/ingest/dedup.js'
import { forwardingCollector, post, track, until } from '../helpers.js'

afterEach(() => vi.useRealTimers())

const statsRequest = (token?: string, method = 'GET') =>
  new Request('http://collector.test/v1/stats', { method, headers: token ? { authorization: `Bearer ${token}` } : {} })

describe('de-duplication (memory)', () => {
  it('forwards a messageId once per source within 24 hours, answers the repeat 200 and counts it', async () => {
    const { collector, calls } = forwardingCollector()
    const batch = { batch: [track({ messageId: 'a' }), track({ messageId: 'b' })] }
    expect((await collector.fetch(post(batch))).status).toBe(200)
    // A client's retry after an ambiguous failure, plus one new message.
    expect((await collector.fetch(post({ batch: [...batch.batch, track({ messageId: 'c' })] }))).status).toBe(200)
    await until(() => collector.stats().forwarded === 3, 'deliveries')
    expect(calls.map((c) => c.json.messageId).sort()).toEqual(['a', 'b', 'c'])
    expect(collector.stats()).toMatchObject({ received: 5, deduplicated: 2, forwarded: 3, skipped: 0 })
  })

  it('forgets the ids of a request refused 503, so the sender’s retry is forwarded', async () => {
    let answer!: () => void
    const held = new Promise<Response>((resolve) => (answer = () => resolve(new Response('ok'))))
    const { collector, calls } = forwardingCollector({ maxPendingDeliveries: 1 }, () => held)
    expect((await collector.fetch(post({ batch: [track({ messageId: 'a' })] }))).status).toBe(200)
    expect((await collector.fetch(post({ batch: [track({ messageId: 'b' })] }))).status).toBe(503)
    answer()
    await until(() => collector.stats().pending === 0, 'room')
    expect((await collector.fetch(post({ batch: [track({ messageId: 'b' })] }))).status).toBe(200)
    await until(() => calls.length === 2, 'the retried message')
    expect(collector.stats().deduplicated).toBe(0)
  })

  it('remembers at most maxEntries ids (oldest forgotten first) and each for the window only', () => {
    const ids = new RecentMessageIds(1_000, 2)
    expect(ids.claim('web', 'a', 0)).toBe(true)
    expect(ids.claim('web', 'a', 10)).toBe(false)
    expect(ids.claim('app', 'a', 10)).toBe(true)
    expect(ids.claim('web', 'b', 20)).toBe(true)
    expect(ids.size).toBe(2)
    expect(ids.claim('web', 'a', 30)).toBe(true) // evicted by the bound
    expect(ids.claim('web', 'b', 1_021)).toBe(true) // past its 24-hour (here 1 s) window
  })
})

describe('GET /v1/stats (memory)', () => {
  it('answers this process’s figures, overall and per source, with the admin token only', async () => {
    const { collector } = forwardingCollector({ adminToken: 'tok' })
    await collector.fetch(post({ batch: [track({ messageId: 'a' }), track({ messageId: 'a' })] }))
    await until(() => collector.stats().forwarded === 1, 'delivery')
    const response = await collector.fetch(statsRequest('tok'))
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body).toMatchObject({ scope: 'process', accepted: 2, deduplicated: 1, forwarded: 1, failed: 0, pending: 0, retrying: 0 })
    expect(body.sources.web).toMatchObject({ accepted: 2, deduplicated: 1, forwarded: 1 })
    expect((await collector.fetch(statsRequest())).status).toBe(401)
    expect((await collector.fetch(statsRequest('tok', 'POST'))).status).toBe(405)
  })
})

describe('admin payloads and the backlog limit (memory)', () => {
  it('queues a large audience in chunks, never past maxPendingDeliveries, and remembers it once all are queued', async () => {
    vi.useFakeTimers()
    let maxPending = 0
    const { collector, calls } = forwardingCollector({ maxPendingDeliveries: 50 }, () => {
      maxPending = Math.max(maxPending, collector.stats().pending)
      return new Response('ok')
    })
    const members = Array.from({ length: 400 }, (_, i) => `u${i}`)
    const dispatch = await collector.syncAudience({ source: 'web', audience: 'VIP', members })
    expect(dispatch.payloads).toHaveLength(400)
    let queued = false
    void dispatch.queued.then(() => (queued = true))
    while (!queued) await vi.advanceTimersByTimeAsync(100)
    expect(await dispatch.settled).toEqual({ delivered: 400, failed: 0 })
    expect(calls).toHaveLength(400)
    expect(maxPending).toBeLessThanOrEqual(50)
    // The membership was remembered: a second sync sends only the change.
    const second = await collector.syncAudience({ source: 'web', audience: 'VIP', members: members.slice(1) })
    expect(second.payloads.map((p) => [p.userId, (p as { traits?: unknown }).traits])).toEqual([['u0', { vip: false }]])
  })
})
