/**
 * The client's promise, as a property (issue 45): over random traces of calls (`track` bursts,
 * `flush`, `close` with or without a bound, at random points, fake time passing between them) and
 * of answers (2xx, 400, 413, 429 with Retry-After, 5xx, connection resets, hangs), under random
 * options, at every step
 *
 *   accepted = delivered + failed + dropped + pending   (pending = queued + inFlight)
 *
 * and once `close()` has settled, pending is 0 and every accepted message was announced exactly
 * once: in a `'flush'` event (then it was in a request answered 2xx) or in an `'error'` event
 * (`QueueFullError`: dropped; any other: failed), agreeing with `stats()` and the flush results.
 * msw at the wire, fake timers; a fixed seed (`FUZZ_RUNS`, `FUZZ_SEED`: docs/contributing.md).
 */
import fc from 'fast-check'
import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { ClientClosedError, isQueueFullError, type Client } from '../../src/index.js'
import { collector, createTestClient, HttpResponse, installServer, server, settle, trackInput } from '../helpers/client.js'
import { prng } from '../../bench/prng.mjs'
import { fcParameters, fuzzTimeout } from './support.js'

installServer()

type Answer =
  | { kind: 'ok'; status: 200 | 202 }
  | { kind: 'status'; status: 400 | 413 | 500 | 503 }
  | { kind: '429'; retryAfter: number }
  | { kind: 'reset' }
  | { kind: 'hang' }

type Step =
  | { kind: 'track'; count: number }
  | { kind: 'flush' }
  | { kind: 'advance'; ms: number }
  | { kind: 'close'; bound?: number }

const answer: fc.Arbitrary<Answer> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('ok' as const), status: fc.constantFrom(200 as const, 202 as const) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('status' as const), status: fc.constantFrom(400 as const, 413 as const, 500 as const, 503 as const) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('429' as const), retryAfter: fc.integer({ min: 0, max: 3 }) }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'reset' as const }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'hang' as const }), weight: 1 },
)

const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('track' as const), count: fc.integer({ min: 1, max: 25 }) }), weight: 5 },
  { arbitrary: fc.constant({ kind: 'flush' as const }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 8_000 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('close' as const), bound: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }) }), weight: 1 },
)

const options = fc.record({
  flushAt: fc.integer({ min: 1, max: 10 }),
  flushAfter: fc.integer({ min: 1, max: 3_000 }),
  maxQueueSize: fc.integer({ min: 1, max: 60 }),
  maxRetries: fc.integer({ min: 0, max: 3 }),
  timeout: fc.integer({ min: 100, max: 3_000 }),
  maxConcurrentRequests: fc.integer({ min: 1, max: 3 }),
  minRetryDelay: fc.integer({ min: 0, max: 200 }),
  maxRetryDelay: fc.integer({ min: 200, max: 2_000 }),
})

/** The msw answer for `a` (a hang never answers: the client's timeout must end it). */
async function respond(a: Answer): Promise<Response> {
  switch (a.kind) {
    case 'ok': return HttpResponse.json({ success: true }, { status: a.status })
    case 'status': return HttpResponse.json({ error: 'fuzzed' }, { status: a.status })
    case '429': return new HttpResponse(null, { status: 429, headers: { 'Retry-After': String(a.retryAfter) } })
    case 'reset': return HttpResponse.error()
    case 'hang':
      await delay('infinite')
      return HttpResponse.json({})
  }
}

/** stats() adds up: accepted = delivered + failed + dropped + queued + inFlight. */
function expectAddsUp(client: Client, accepted: number, where: string): void {
  const s = client.stats()
  expect(s.delivered + s.failed + s.dropped + s.queued + s.inFlight, `${where}: ${JSON.stringify(s)}, accepted ${accepted}`).toBe(accepted)
}

describe('accepted = delivered + failed + dropped + pending', () => {
  it('holds at every step of random traces of calls and answers, and every message is announced exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(options, fc.array(step, { minLength: 1, maxLength: 25 }), fc.array(answer, { maxLength: 40 }), fc.integer(), async (opts, steps, answers, jitterSeed) => {
        vi.useFakeTimers()
        vi.spyOn(Math, 'random').mockImplementation(prng(jitterSeed))
        server.resetHandlers()
        const acceptedIds = new Set<string>()
        // A copy: the trace fast-check prints must be the one it made.
        const toGive = [...answers]
        const wire = collector(async (received) => {
          const a = toGive.shift() ?? { kind: 'ok', status: 200 }
          const response = await respond(a)
          if (a.kind === 'ok') for (const m of received.body.batch) acceptedIds.add(m.messageId)
          return response
        })
        const client = createTestClient(opts)
        const delivered = new Map<string, number>()
        const failed = new Map<string, number>()
        const dropped = new Map<string, number>()
        const bump = (map: Map<string, number>, id: string) => map.set(id, (map.get(id) ?? 0) + 1)
        client.on('flush', (e) => e.messages.forEach((m) => bump(delivered, m.messageId)))
        client.on('error', (e) => e.messages.forEach((m) => bump(isQueueFullError(e) ? dropped : failed, (m as { messageId: string }).messageId)))

        const tracked: string[] = []
        const results: Array<Promise<{ delivered: number; failed: number }>> = []
        let closing: Promise<{ delivered: number; failed: number }> | undefined
        for (const [i, s] of steps.entries()) {
          if (s.kind === 'track') {
            for (let n = 0; n < s.count; n++) {
              if (closing) expect(() => client.track(trackInput(n))).toThrow(ClientClosedError)
              else tracked.push(client.track(trackInput(n)).messageId)
            }
          } else if (s.kind === 'flush') results.push(client.flush())
          else if (s.kind === 'advance') await vi.advanceTimersByTimeAsync(s.ms)
          else closing = client.close(s.bound)
          expectAddsUp(client, tracked.length, `after step ${i} (${s.kind})`)
          // Microtasks done (a dropped burst is reported in one): the counts still add up.
          await vi.advanceTimersByTimeAsync(0)
          expectAddsUp(client, tracked.length, `after step ${i} (${s.kind}), its microtasks run`)
        }
        const final = await settle(closing ?? client.close(), 3_600_000, 1_000)
        await Promise.all(results.map((r) => settle(r, 3_600_000, 1_000)))
        await vi.advanceTimersByTimeAsync(0)

        const stats = client.stats()
        expect(stats.queued + stats.inFlight).toBe(0)
        expect(stats.delivered + stats.failed + stats.dropped).toBe(tracked.length)
        // Each accepted message announced once, in one place only.
        for (const id of tracked) {
          const seen = (delivered.get(id) ?? 0) + (failed.get(id) ?? 0) + (dropped.get(id) ?? 0)
          expect(seen, `message ${id}: delivered ${delivered.get(id)}, failed ${failed.get(id)}, dropped ${dropped.get(id)}`).toBe(1)
          if (delivered.has(id)) expect(acceptedIds.has(id)).toBe(true)
        }
        expect([delivered.size, failed.size, dropped.size]).toEqual([stats.delivered, stats.failed, stats.dropped])
        // close() waited for all that was held when it was called; stats count everything.
        expect(final.delivered + final.failed).toBeLessThanOrEqual(stats.delivered + stats.failed)
        // Nothing is sent once settled.
        const requests = wire.requests.length
        await vi.advanceTimersByTimeAsync(60_000)
        expect(wire.requests.length).toBe(requests)
        vi.useRealTimers()
        vi.restoreAllMocks()
      }),
      fcParameters(40),
    )
  }, fuzzTimeout())
})
