/**
 * Fault soak (issue 5): 20,000 messages through a collector that answers 30 % 500s, 5 % network
 * errors, some 429s with Retry-After: 1, and a 10 s outage (all 503), on fake time. At the end
 * every messageId was either delivered (in a 2xx-answered request) or reported failed through
 * 'error' — none lost — and none was accepted twice (none of these faults is ambiguous: a 500 or a
 * reset before the answer means the batch was not accepted).
 */
import { describe, expect, it, vi } from 'vitest'
import { collector, createTestClient, HttpResponse, installServer, listen, trackInput } from '../helpers/client.js'
import { prng } from '../../bench/prng.mjs'

installServer()

const TOTAL = 20_000
const T0 = Date.parse('2026-11-22T10:00:00.000Z')
const OUTAGE = { from: T0 + 3000, to: T0 + 13_000 }

describe('fault soak', () => {
  it('20,000 messages under 500s, resets, 429s and a 10 s outage: none lost, none accepted twice', async () => {
    vi.useFakeTimers({ now: T0 })
    vi.spyOn(Math, 'random').mockImplementation(prng(7)) // the retry jitter
    const fault = prng(42)
    const accepted = new Map<string, number>()
    const answers = { ok: 0, e500: 0, reset: 0, e429: 0, outage: 0 }
    collector((req) => {
      if (Date.now() >= OUTAGE.from && Date.now() < OUTAGE.to) {
        answers.outage++
        return new HttpResponse(null, { status: 503 })
      }
      const r = fault()
      if (r < 0.3) {
        answers.e500++
        return new HttpResponse(null, { status: 500 })
      }
      if (r < 0.35) {
        answers.reset++
        return HttpResponse.error()
      }
      if (r < 0.4) {
        answers.e429++
        return new HttpResponse(null, { status: 429, headers: { 'Retry-After': '1' } })
      }
      answers.ok++
      for (const m of req.body.batch) accepted.set(m.messageId, (accepted.get(m.messageId) ?? 0) + 1)
      return HttpResponse.json({ success: true })
    })

    const client = createTestClient({ flushAt: 100, maxQueueSize: 30_000 })
    const events = listen(client)
    const produced: string[] = []
    // The producer: 1,000 messages every 500 ms of fake time, so the outage hits mid-stream.
    for (let i = 0; i < TOTAL; i++) {
      produced.push(client.track(trackInput(i, { properties: { n: i } })).messageId)
      if (i % 1000 === 999) await vi.advanceTimersByTimeAsync(500)
    }
    let result: { delivered: number; failed: number } | undefined
    void client.flush().then((r) => (result = r))
    for (let step = 0; result === undefined && step < 36_000; step++) await vi.advanceTimersByTimeAsync(100)
    expect(result).toBeDefined()

    const failed = new Set(events.error.flatMap((e) => e.messages.map((m) => (m as { messageId: string }).messageId)))
    const lost = produced.filter((id) => !accepted.has(id) && !failed.has(id))
    const both = produced.filter((id) => accepted.has(id) && failed.has(id))
    const duplicates = [...accepted.values()].filter((n) => n > 1).length

    expect(new Set(produced).size).toBe(TOTAL)
    expect(lost).toEqual([])
    expect(both).toEqual([])
    expect(duplicates).toBe(0)
    expect(accepted.size + failed.size).toBe(TOTAL)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 0, dropped: 0, delivered: accepted.size, failed: failed.size })
    // Every fault really happened, and the outage was ridden out rather than failing everything.
    expect(answers.outage).toBeGreaterThan(0)
    expect(answers.e500).toBeGreaterThan(0)
    expect(answers.reset).toBeGreaterThan(0)
    expect(answers.e429).toBeGreaterThan(0)
    // A batch may still exhaust its 10 retries, mostly on the outage; it is then reported, as
    // asserted above. A batch waiting to retry does not hold a connection slot, so every batch in
    // memory keeps trying through the outage (peers do the same). Which batches run out depends on
    // the order in which the concurrent requests draw their faults: over fault seeds 1–4 and 42,
    // with fetch or node:http, 1.5–7 % of the messages are reported failed. The bound says the
    // outage was ridden out, without resting on one seed's ordering.
    expect(accepted.size).toBeGreaterThanOrEqual(TOTAL * 0.9)
    expect(client.stats().retries).toBe(events.retry.length)
    console.info(`soak: ${accepted.size} delivered, ${failed.size} failed, ${duplicates} duplicates; answers ${JSON.stringify(answers)}; ${(Date.now() - T0) / 1000} s of fake time`)
  }, 60_000)
})

describe('ambiguous failures', () => {
  it('a batch accepted but answered 500, or answered after the timeout, is re-sent: duplicates only there', async () => {
    vi.useFakeTimers({ now: T0 })
    vi.spyOn(Math, 'random').mockImplementation(prng(11))
    const fault = prng(99)
    const accepted = new Map<string, number>()
    const ambiguous = new Set<string>()
    collector(async (req) => {
      const r = fault()
      const ids = req.body.batch.map((m) => m.messageId)
      if (r < 0.3) return new HttpResponse(null, { status: 500 }) // not accepted
      for (const id of ids) accepted.set(id, (accepted.get(id) ?? 0) + 1)
      if (r < 0.4) {
        // Accepted, but the client sees a 500: it must retry, and the server sees it twice.
        for (const id of ids) ambiguous.add(id)
        return new HttpResponse(null, { status: 500 })
      }
      if (r < 0.45) {
        // Accepted, but the answer comes after the client's timeout.
        for (const id of ids) ambiguous.add(id)
        await new Promise((resolve) => setTimeout(resolve, 5000))
      }
      return HttpResponse.json({ success: true })
    })
    const client = createTestClient({ flushAt: 50, timeout: 2000, maxQueueSize: 10_000 })
    const events = listen(client)
    const produced = Array.from({ length: 5000 }, (_, i) => client.track(trackInput(i)).messageId)
    let result: { delivered: number; failed: number } | undefined
    void client.flush().then((r) => (result = r))
    for (let step = 0; result === undefined && step < 36_000; step++) await vi.advanceTimersByTimeAsync(100)

    const failed = new Set(events.error.flatMap((e) => e.messages.map((m) => (m as { messageId: string }).messageId)))
    const duplicated = [...accepted].filter(([, n]) => n > 1).map(([id]) => id)
    expect(produced.filter((id) => !accepted.has(id) && !failed.has(id))).toEqual([])
    expect(duplicated.length).toBeGreaterThan(0)
    for (const id of duplicated) expect(ambiguous.has(id)).toBe(true)
    console.info(`ambiguous soak: ${accepted.size} accepted, ${failed.size} failed, ${duplicated.length} duplicated (${((100 * duplicated.length) / produced.length).toFixed(1)} %)`)
  }, 60_000)
})
