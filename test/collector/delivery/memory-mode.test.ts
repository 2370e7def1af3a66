/**
 * The embedded (memory) mode's share of the durable-collector issue: de-duplication by
 * (source, messageId), `GET /v1/stats`, admin payloads that never push the backlog past
 * `maxPendingDeliveries`, and first attempts paced while ingest saturates the loop. (The queue-server mode: test/collector/durable/.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryQueue } from '../../../src/collector/delivery/memory-queue.js'
import { Pacer } from '../../../src/collector/delivery/pacer.js'
import { RecentMessageIds } from '../../../src/collector/ingest/dedup.js'
import { Tally } from '../../../src/collector/stats.js'
import { createLogger } from '../../../src/logger.js'
import { WebhookDestination } from '../../../src/webhooks/index.js'
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
    const { collector } = forwardingCollector({ adminToken: 'admin-token-for-tests' })
    await collector.fetch(post({ batch: [track({ messageId: 'a' }), track({ messageId: 'a' })] }))
    await until(() => collector.stats().forwarded === 1, 'delivery')
    const response = await collector.fetch(statsRequest('admin-token-for-tests'))
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body).toMatchObject({ scope: 'process', accepted: 2, deduplicated: 1, forwarded: 1, failed: 0, pending: 0, retrying: 0 })
    expect(body.sources.web).toMatchObject({ accepted: 2, deduplicated: 1, forwarded: 1 })
    expect((await collector.fetch(statsRequest())).status).toBe(401)
    expect((await collector.fetch(statsRequest('admin-token-for-tests', 'POST'))).status).toBe(405)
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

describe('audience syncs take turns (memory)', () => {
  const audiences = (members: string[], audience = 'VIP') =>
    new Request('http://collector.test/v1/audiences', {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token-for-tests', 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'web', audience, members }),
    })

  it('a sync waits while the one before it waits for room (over HTTP at most 5 s, answered without `sent`); another audience does not', async () => {
    // Node reads a request's body on its own (real) timers, not the faked ones.
    const realImmediate = setImmediate
    vi.useFakeTimers()
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    const { collector, calls } = forwardingCollector({ maxPendingDeliveries: 50, adminToken: 'admin-token-for-tests' }, async () => (await gate, new Response('ok')))
    const members = Array.from({ length: 400 }, (_, i) => `u${i}`)
    const first = await collector.syncAudience({ source: 'web', audience: 'VIP', members })
    const realTurn = () => new Promise((resolve) => realImmediate(resolve))
    await realTurn()
    const timers = vi.getTimerCount()
    const answering = collector.fetch(audiences(members.slice(1)))
    // Its 5 s start once its body is read; the clock moves on only then (moved before, the 5 s
    // had passed when the wait began, and the answer never came: 1 full run in 4).
    for (let turns = 0; vi.getTimerCount() === timers; turns++) {
      if (turns === 10_000) throw new Error('The HTTP sync never started its 5 s wait')
      await realTurn()
    }
    // Another audience's sync is not held by VIP's turn, for which the HTTP sync now waits.
    const other = await collector.syncAudience({ source: 'web', audience: 'Gold', members: ['g1'] })
    expect(other.payloads.map((p) => p.userId)).toEqual(['g1'])
    await vi.advanceTimersByTimeAsync(5_000)
    const response = await answering
    expect(await response.json()).toEqual({ success: true, sources: ['web'], queuing: true })
    open()
    let queued = false
    void first.queued.then(() => (queued = true))
    while (!queued) await vi.advanceTimersByTimeAsync(100)
    // Its turn came: the HTTP sync sent only the change from the first one's membership.
    while (!calls.some((c) => c.json.userId === 'u0' && (c.json.traits as { vip?: boolean }).vip === false)) await vi.advanceTimersByTimeAsync(100)
    await collector.close()
    const vip = new Map(calls.flatMap((c) => ((c.json.traits as { vip?: boolean }).vip === undefined ? [] : [[c.json.userId, (c.json.traits as { vip: boolean }).vip]])))
    expect(vip.size).toBe(400)
    expect([...vip].filter(([, member]) => !member)).toEqual([['u0', false]])
  })
})

describe('pacing (memory)', () => {
  /**
   * A memory queue for `sources` (default `web`), each with its own pacer that always sees a
   * saturated event loop, and receivers that hold every request until the test answers it
   * (`answer(i, status)`, for `web`) or it is aborted.
   */
  function pacedQueue(sources = ['web']) {
    const held: Record<string, Array<(status: number) => void>> = {}
    const destinations = new Map(sources.map((source) => {
      const requests: Array<(status: number) => void> = (held[source] = [])
      const destination = new WebhookDestination({
        urls: [{ url: `https://hooks.test/${source}` }],
        fetch: (_url, init) => new Promise<Response>((resolve, reject) => {
          requests.push((status) => resolve(new Response('', { status })))
          init?.signal?.addEventListener('abort', () => reject(init.signal!.reason))
        }),
        // A failed attempt's retry comes 1 s later (random 0.5 of a 2 s first delay).
        backoff: { baseMs: 2_000, capMs: 2_000 },
        random: () => 0.5,
      })
      return [source, destination] as const
    }))
    const tally = new Tally(sources)
    const pacers = new Map<string, Pacer>()
    const pacerFor = (source: string) => {
      const pacer = new Pacer(8, () => true, 1, 50)
      pacers.set(source, pacer)
      return pacer
    }
    const queue = new MemoryQueue({ destinations, concurrency: 8, maxPending: 100, tally, log: createLogger('analytics:collector', false), pacerFor })
    const deliveries = (n: number, source = 'web') => Array.from({ length: n }, (_, i) => ({ source, type: 'track' as const, body: `{"n":${i}}` }))
    return { queue, pacer: pacers.get('web')!, tally, held, requests: held.web, deliveries, answer: (i: number, status = 200) => held.web[i](status) }
  }

  it('each source is paced on its own: one whose receiver is slow holds back no other source', async () => {
    vi.useFakeTimers()
    const { queue, held, deliveries } = pacedQueue(['web', 'app'])
    queue.enqueue(deliveries(2, 'web'))
    queue.enqueue(deliveries(2, 'app'))
    await vi.advanceTimersByTimeAsync(0)
    // `web`'s first attempt is held by its receiver; `app`'s first one goes all the same.
    expect([held.web.length, held.app.length]).toEqual([1, 1])
  })

  it('while requests are being taken in on a saturated loop, one first attempt at a time; all of them once ingest pauses', async () => {
    vi.useFakeTimers()
    const { queue, requests, deliveries, answer, tally } = pacedQueue()
    expect(queue.enqueue(deliveries(4))).toBe(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    // The one attempt allowed lands; ingest is still recent: the next one goes, alone, once 5 ms
    // have passed since the last one started.
    answer(0)
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(5)
    expect(requests).toHaveLength(2)
    expect(tally.snapshot().sources.web.forwarded).toBe(1)
    // 50 ms without a request taken in: the rest start together.
    await vi.advanceTimersByTimeAsync(60)
    expect(requests).toHaveLength(4)
    for (const i of [1, 2, 3]) answer(i)
    await vi.advanceTimersByTimeAsync(0)
    expect(tally.snapshot().sources.web.forwarded).toBe(4)
    expect(queue.counts()).toEqual({ pending: 0, retrying: 0 })
  })

  it('once a request is refused (backlog full), first attempts go at full concurrency: the backlog drains', async () => {
    vi.useFakeTimers()
    const { queue, requests, deliveries } = pacedQueue()
    queue.enqueue(deliveries(3))
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    // Past maxPending (100): answered 503 by ingest, and the pacer stops holding attempts back.
    expect(queue.enqueue(deliveries(98))).toBe(false)
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(3)
    // Still overloaded: what is accepted now starts at once, up to `concurrency` (8).
    expect(queue.enqueue(deliveries(10))).toBe(true)
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(8)
  })

  it('a delivery waiting for its retry gives its place to the next one, and its retry does not wait', async () => {
    vi.useFakeTimers()
    const { queue, pacer, requests, deliveries, answer, tally } = pacedQueue()
    // A request being taken in for the whole test: first attempts go one at a time.
    pacer.ingestStarted()
    queue.enqueue(deliveries(2))
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    answer(0, 503)
    await vi.advanceTimersByTimeAsync(5)
    // The first now waits 1 s for its retry: the second has its place.
    expect(requests).toHaveLength(2)
    expect(queue.counts()).toEqual({ pending: 2, retrying: 1 })
    // The retry starts on the destination's schedule, although the second still holds the place.
    await vi.advanceTimersByTimeAsync(1_000)
    expect(requests).toHaveLength(3)
    answer(1)
    answer(2)
    await vi.advanceTimersByTimeAsync(0)
    expect(tally.snapshot().sources.web).toMatchObject({ forwarded: 2, retries: 1, failed: 0 })
  })

  it('deliveries still waiting for their place when the drain runs out are reported not delivered, as the stats count them', async () => {
    vi.useFakeTimers()
    const { queue, pacer, requests, deliveries, tally } = pacedQueue()
    pacer.ingestStarted()
    queue.enqueue(deliveries(3))
    await vi.advanceTimersByTimeAsync(0)
    expect(requests).toHaveLength(1)
    const closing = queue.close(500)
    await vi.advanceTimersByTimeAsync(500)
    // The two behind the held attempt never started, and the attempt in flight is cancelled (its
    // 5 s timeout is not waited for): all three failed at the drain's bound.
    expect(tally.snapshot().sources.web.failed).toBe(3)
    await expect(closing).resolves.toEqual({ drained: false, pending: 3 })
    expect(tally.snapshot().sources.web).toMatchObject({ forwarded: 0, failed: 3 })
    expect(queue.counts()).toEqual({ pending: 0, retrying: 0 })
  })
})
