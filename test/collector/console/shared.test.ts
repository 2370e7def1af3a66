import { describe, expect, it, vi } from 'vitest'
import { ConsoleRecorder } from '../../../src/collector/console/recorder.js'
import { shareConsole } from '../../../src/collector/console/shared.js'
import type { QueueBus } from '../../../src/collector/state/bus.js'

function sharedWithBus() {
  const published: Array<{ topic: string; data: any }> = []
  const bus = {
    publish: async (topic: string, data: unknown) => void published.push({ topic, data }),
    subscribe: () => () => {},
  } as unknown as QueueBus
  return { shared: shareConsole(new ConsoleRecorder(), bus, { now: () => 0 }), published }
}

describe('shareConsole: the accepted-message notice', () => {
  it('a small message is shared whole, with its body', () => {
    const { shared, published } = sharedWithBus()
    const message = { type: 'track', event: 'Ping', userId: 'u', messageId: 'm1' }
    shared.record('web', message, { body: '{"x":1}', traceId: 't1' })
    expect(published).toStrictEqual([{ topic: 'accepted', data: { s: 'web', m: message, b: '{"x":1}', t: 't1' } }])
  })

  it('a message past 6,000 UTF-8 bytes (multi-byte text counted as bytes) is shared as a summary with its exact size', () => {
    const { shared, published } = sharedWithBus()
    // 2,100 three-byte characters: 2,100 UTF-16 units, 6,300 bytes (+ the rest of the JSON).
    const message = { type: 'track', event: 'Big', userId: 'u', anonymousId: 'a', messageId: 'm2', properties: { text: '€'.repeat(2_100) } }
    const size = new TextEncoder().encode(JSON.stringify(message)).length
    shared.record('web', message, { outcome: 'not forwarded', reason: 'no destination' })
    expect(published[0].data.m).toStrictEqual({
      // The ids a search finds it by are kept.
      type: 'track', event: 'Big', name: undefined, userId: 'u', anonymousId: 'a', messageId: 'm2', receivedAt: undefined,
      note: `${size} bytes: shown in the console of the collector process that holds its body`,
    })
  })

  it('a message with a bigint (from the lossless parse) is sized with the lossless serialiser', async () => {
    const { loadExactJson } = await import('../../../src/message/exact-json.js')
    await loadExactJson()
    const { shared, published } = sharedWithBus()
    const message = { type: 'track', event: 'Id', userId: 'u', messageId: 'm3', properties: { id: 12345678901234567890n } }
    shared.record('web', message, { outcome: 'not forwarded', reason: 'no destination' })
    expect(published[0].data.m).toBe(message)
  })
})

describe('shareConsole: admin payloads (deletion requests, audience syncs)', () => {
  it('are shared with their origin and name; a deletion is followed even past the per-second budget', () => {
    const published: Array<{ topic: string; data: any }> = []
    const bus = { publish: async (topic: string, data: unknown) => void published.push({ topic, data }), subscribe: () => () => {} } as unknown as QueueBus
    const recorder = new ConsoleRecorder()
    const shared = shareConsole(recorder, bus, { perSecond: 1, now: () => 0 })
    expect(shared.traceId()).toMatch(/\.1$/)
    // Past the budget: a traceId marked unfollowed.
    expect(shared.traceId()).toMatch(/~2$/)
    const traceId = shared.traceId(true)
    expect(traceId).toMatch(/\.3$/)
    const payload = { type: 'identify', userId: 'ada', traits: { fans: true } }
    shared.record('web', payload, { body: '{}', traceId }, { origin: 'audience', name: 'Fans' })
    expect(published[0].data).toMatchObject({ g: 'audience', n: 'Fans', t: traceId })
    expect(recorder.get('1')).toMatchObject({ type: 'identify', name: 'Fans', origin: 'audience', userId: 'ada' })
  })
})

/** Two processes' consoles on one bus: what one publishes, the other hears. */
function linkedPair(options: { perSecond?: number; now?: () => number } = {}) {
    const listeners: Array<(topic: string, data: unknown) => void> = []
    const sizes: number[] = []
    const busOf = (other: number) => ({
      id: `p${other}`,
      publish: async (topic: string, data: unknown) => {
        sizes.push(new TextEncoder().encode(JSON.stringify(data)).length)
        listeners[other]?.(topic, JSON.parse(JSON.stringify(data)))
      },
      subscribe: (listener: (topic: string, data: unknown) => void) => ((listeners[1 - other] = listener), () => {}),
    }) as unknown as QueueBus
    const recorders = [new ConsoleRecorder(), new ConsoleRecorder()]
    const shared = [shareConsole(recorders[0], busOf(1), options), shareConsole(recorders[1], busOf(0), options)]
    return { recorders, shared, sizes }
}

describe('shareConsole: trace notices', () => {
  const linked = linkedPair

  it("carry each URL's answer (its first KB) and duration to the other processes' records", () => {
    const { recorders, shared } = linked()
    const traceId = shared[0].traceId()!
    shared[0].record('web', { type: 'track', event: 'Paid', userId: 'ada' }, { body: '{"version":1}', traceId })
    const trace = shared[0].traces(traceId)
    trace.attempt(1, ['https://a.test/hook', 'https://b.test/hook'])
    trace.settled(true, [
      { url: 'https://a.test/hook', attempt: 1, status: 500, answer: 'database down', durationMs: 12, error: new Error('https://a.test/hook answered 500.') as never },
      { url: 'https://b.test/hook', attempt: 1, status: 200, answer: 'ok', durationMs: 30 },
    ])
    for (const recorder of recorders) {
      expect(recorder.get('1')!.delivery.attempts[0].results).toStrictEqual([
        { url: 'https://a.test/hook', status: 500, answer: 'database down', durationMs: 12, error: 'https://a.test/hook answered 500.' },
        { url: 'https://b.test/hook', status: 200, answer: 'ok', durationMs: 30 },
      ])
    }
    expect(recorders[1].payloadOf('1')).toBe('{"version":1}')
  })

  it('cut five URLs\' answers that JSON escapes to fit one PostgreSQL notice (7,800 bytes)', () => {
    const { recorders, shared, sizes } = linked()
    const traceId = shared[0].traceId()!
    shared[0].record('web', { type: 'track', event: 'Noisy' }, { body: '{}', traceId })
    const urls = [1, 2, 3, 4, 5].map((n) => `https://r${n}.test/hook`)
    // 1,024 control characters: 6 bytes each as JSON.
    const answer = '\u0001'.repeat(1_024)
    shared[0].traces(traceId).attempt(1, urls)
    shared[0].traces(traceId).settled(false, urls.map((url) => ({ url, attempt: 1, status: 503, answer, durationMs: 5, error: new Error(`${url} answered 503.`) as never })))
    expect(Math.max(...sizes)).toBeLessThan(7_800)
    const heard = recorders[1].get('1')!.delivery
    expect(heard.outcome).toBe('failed')
    // Each answer keeps an equal share of the 3,600 bytes (720 as JSON: 119 characters), none is dropped.
    expect(heard.attempts[0].results.map((r) => [r.status, r.answer?.length])).toEqual(urls.map(() => [503, 119]))
  })
})

describe('shareConsole: past the follow bound (100 messages a second)', () => {
  const url = 'https://hooks.test/in'
  const failure = { url, attempt: 1, status: 503, answer: 'busy', durationMs: 3, error: new Error(`${url} answered 503.`) as never }

  it('a delivery that retries or fails is listed in every console, with its body; a success is counted only', async () => {
    vi.useFakeTimers()
    try {
      const { recorders, shared } = linkedPair({ perSecond: 1, now: () => 0 })
      const followed = shared[0].traceId()
      shared[0].record('web', { type: 'track', event: 'First' }, { body: '{"type":"track","event":"First"}', traceId: followed })
      const [quiet, failing] = [shared[0].traceId(), shared[0].traceId()]
      expect([quiet, failing].every((t) => t.includes('~'))).toBe(true)
      for (const [traceId, event] of [[quiet, 'Quiet'], [failing, 'Failing']]) {
        // Not listed when accepted, in either console.
        shared[0].record('web', { type: 'track', event }, { body: `{"type":"track","event":"${event}"}`, traceId })
      }
      expect(recorders.map((r) => r.changedSince(0).length)).toEqual([1, 1])

      // Process 1 attempts both: the success is counted, the retry lists the message everywhere.
      const ok = shared[1].traces(quiet, { source: 'web', body: '{"type":"track","event":"Quiet"}' })
      ok.attempt(1, [url])
      ok.settled(true, [{ url, attempt: 1, status: 200 }])
      const bad = shared[1].traces(failing, { source: 'web', body: '{"type":"track","event":"Failing"}' })
      bad.attempt(1, [url])
      bad.retry(1, [failure], 1_000)
      for (const [i, recorder] of recorders.entries()) {
        const [record] = recorder.changedSince(0)
        expect(record, `console ${i}`).toMatchObject({ name: 'Failing', delivery: { outcome: 'retrying', attempts: [{ attempt: 1, results: [{ url, status: 503, answer: 'busy' }] }] } })
        // Accepted by process 0: remote in process 1's console only.
        expect(record.remote).toBe(i === 1 ? true : undefined)
        expect(recorder.payloadOf(record.id)).toBe('{"type":"track","event":"Failing"}')
      }
      expect(recorders.map((r) => r.unlistedCount)).toEqual([0, 1])
      await vi.advanceTimersByTimeAsync(1_000)
      expect(recorders.map((r) => r.unlistedCount)).toEqual([1, 1])

      // Listed now: its next attempt (by process 0) is followed like any other, and it can fail.
      const again = shared[0].traces(failing, { source: 'web', body: '{"type":"track","event":"Failing"}' })
      again.attempt(2, [url])
      again.settled(false, [{ ...failure, attempt: 2 }])
      for (const recorder of recorders) expect(recorder.changedSince(0)[0].delivery).toMatchObject({ outcome: 'failed', attempts: [{ attempt: 1 }, { attempt: 2 }] })
      for (const s of shared) s.close()
    } finally {
      vi.useRealTimers()
    }
  })
})
