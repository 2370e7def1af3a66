import { describe, expect, it } from 'vitest'
import { ConsoleRecorder } from '../../../src/collector/console/recorder.js'
import { HttpError } from '../../../src/errors.js'

const track = (event: string) => ({ type: 'track', event, userId: 'u', receivedAt: '2026-11-23T10:00:00.000Z' })

function clock(start = Date.parse('2026-11-23T10:00:30.000Z')) {
  const state = { now: start }
  return { state, now: () => state.now }
}

describe('ConsoleRecorder', () => {
  it('records messages newest first, and only what changed since a version', () => {
    const recorder = new ConsoleRecorder()
    recorder.accepted('web', track('A'), { body: '{"a":1}' })
    const seen = recorder.version
    recorder.accepted('web', track('B'), { outcome: 'not forwarded', reason: 'integrations turn Webhooks off' })
    expect(recorder.changedSince(0).map((r) => r.name)).toEqual(['B', 'A'])
    expect(recorder.changedSince(seen)).toMatchObject([
      { name: 'B', delivery: { outcome: 'not forwarded', reason: 'integrations turn Webhooks off', attempts: [] } },
    ])
  })

  it('makes a record when it is read, as it was when accepted and changed (versions, time of receipt)', () => {
    const { state, now } = clock()
    const recorder = new ConsoleRecorder({ now })
    const a = recorder.accepted('web', { type: 'track', event: 'A', userId: 'u' }, { body: '{}' })
    recorder.accepted('web', track('B'), { body: '{}' })
    const seen = recorder.version
    state.now += 5_000
    a.attempt(1, ['http://a.test/hook'])
    // Nothing was read before: the record is made now, with the time it was accepted.
    expect(recorder.changedSince(seen)).toMatchObject([
      { id: '1', name: 'A', version: seen + 1, receivedAt: '2026-11-23T10:00:30.000Z', delivery: { outcome: 'queued', attempts: [{ attempt: 1, at: '2026-11-23T10:00:35.000Z' }] } },
    ])
    a.settled(true, [{ url: 'http://a.test/hook', attempt: 1, status: 200 }])
    expect(recorder.get('1')).toMatchObject({ version: seen + 2, delivery: { outcome: 'delivered' } })
    expect(recorder.changedSince(seen + 1).map((r) => r.id)).toEqual(['1'])
  })

  it('keeps at most `limit` messages, dropping the oldest', () => {
    const recorder = new ConsoleRecorder({ limit: 2 })
    for (const name of ['A', 'B', 'C']) recorder.accepted('web', track(name), { body: '{}' })
    expect(recorder.changedSince(0).map((r) => r.name)).toEqual(['C', 'B'])
    expect(recorder.get('1')).toBeUndefined()
  })

  it("records each attempt's outcome per URL, the next retry and the outcome", () => {
    const { state, now } = clock()
    const recorder = new ConsoleRecorder({ now })
    const trace = recorder.accepted('web', track('A'), { body: '{}' })
    const urls = ['http://a.test/hook', 'http://b.test/hook']
    trace.attempt(1, urls)
    const error503 = new HttpError(503, 'Service Unavailable')
    trace.retry(1, [{ url: urls[0], attempt: 1, status: 503, error: error503 }, { url: urls[1], attempt: 1, status: 400, error: new HttpError(400, 'Bad Request') }], 2_000)
    expect(recorder.get('1')!.delivery).toMatchObject({ outcome: 'retrying', nextRetryAt: '2026-11-23T10:00:32.000Z' })
    state.now += 2_000
    trace.attempt(2, [urls[0]])
    trace.settled(true, [{ url: urls[0], attempt: 2, status: 200 }, { url: urls[1], attempt: 1, status: 400, error: new HttpError(400, 'Bad Request') }])
    const { delivery } = recorder.get('1')!
    expect(delivery.outcome).toBe('delivered')
    expect(delivery.nextRetryAt).toBeUndefined()
    expect(delivery.attempts).toEqual([
      { attempt: 1, at: '2026-11-23T10:00:30.000Z', results: [{ url: urls[0], status: 503, error: error503.message }, { url: urls[1], status: 400, error: expect.any(String) }] },
      { attempt: 2, at: '2026-11-23T10:00:32.000Z', results: [{ url: urls[0], status: 200 }] },
    ])
  })

  it('an attempt that starts clears the next retry time it was waiting for (not an earlier attempt heard late)', () => {
    const { state, now } = clock()
    const recorder = new ConsoleRecorder({ now })
    const trace = recorder.accepted('web', track('A'), { body: '{}', traceId: 'p.1' })
    const url = 'http://a.test/hook'
    const error503 = new HttpError(503, 'Service Unavailable')
    trace.attempt(1, [url])
    trace.retry(1, [{ url, attempt: 1, status: 503, error: error503 }], 2_000)
    expect(recorder.get('1')!.delivery).toMatchObject({ outcome: 'retrying', nextRetryAt: '2026-11-23T10:00:32.000Z' })
    state.now += 2_000
    trace.attempt(2, [url])
    // Under way: no "next retry" at a time already past.
    expect(recorder.get('1')!.delivery.nextRetryAt).toBeUndefined()
    trace.retry(2, [{ url, attempt: 2, status: 503, error: error503 }], 4_000)
    expect(recorder.get('1')!.delivery.nextRetryAt).toBe('2026-11-23T10:00:36.000Z')
    // Durable mode: a report of an earlier attempt arriving now leaves the awaited retry's time.
    recorder.traced('p.1')!.attempt(1, [url])
    expect(recorder.get('1')!.delivery.nextRetryAt).toBe('2026-11-23T10:00:36.000Z')
  })

  it("a URL still answering when another delivered shows `still answering`, then its own late outcome; heard before `settled`, it stays", () => {
    const recorder = new ConsoleRecorder()
    const urls = ['http://a.test/hook', 'http://b.test/hook', 'http://c.test/hook']
    const trace = recorder.accepted('web', track('A'), { body: '{}' })
    trace.attempt(1, urls)
    trace.late({ url: urls[2], attempt: 1, status: 202 })
    trace.settled(true, [{ url: urls[0], attempt: 1, status: 200 }, { url: urls[1], attempt: 1, pending: true }, { url: urls[2], attempt: 1, pending: true }])
    expect(recorder.get('1')!.delivery.attempts[0].results).toEqual([
      { url: urls[0], status: 200 },
      { url: urls[1], error: 'still answering (another URL accepted the message)' },
      { url: urls[2], status: 202 },
    ])
    const seen = recorder.version
    trace.late({ url: urls[1], attempt: 1, status: 400, error: new HttpError(400, 'Bad Request') })
    const record = recorder.get('1')!
    expect(record.version).toBeGreaterThan(seen)
    expect(record.delivery).toMatchObject({ outcome: 'delivered', attempts: [{ results: [{ status: 200 }, { url: urls[1], status: 400, error: 'Bad Request' }, { status: 202 }] }] })
    // Not an outcome of its own: the chart counted the delivery once.
    expect(recorder.activity().reduce((n, m) => n + m.delivered + m.failed + m.retrying, 0)).toBe(1)
  })

  it('retries only a failed delivery by hand, continuing the attempt numbers', () => {
    const recorder = new ConsoleRecorder()
    const trace = recorder.accepted('web', track('A'), { body: '{"exact":"bytes"}' })
    expect(recorder.retryByHand('1')).toBeUndefined()
    trace.attempt(1, ['http://a.test/hook'])
    trace.settled(false, [{ url: 'http://a.test/hook', attempt: 1, status: 400, error: new HttpError(400, 'Bad Request') }])
    const again = recorder.retryByHand('1')!
    expect(again).toMatchObject({ source: 'web', type: 'track', body: '{"exact":"bytes"}' })
    expect(recorder.get('1')!.delivery.outcome).toBe('queued')
    again.trace.attempt(1, ['http://a.test/hook'])
    again.trace.settled(true, [{ url: 'http://a.test/hook', attempt: 1, status: 200 }])
    expect(recorder.get('1')!.delivery.attempts.map((a) => [a.attempt, a.results[0].status])).toEqual([[1, 400], [2, 200]])
    expect(recorder.retryByHand('99')).toBeUndefined()
  })

  it('counts delivered, retrying and failed per minute for the last hour', () => {
    const { state, now } = clock()
    const recorder = new ConsoleRecorder({ now })
    const a = recorder.accepted('web', track('A'), { body: '{}' })
    a.retry(1, [], 0)
    a.settled(true, [])
    state.now += 60_000
    recorder.accepted('web', track('B'), { body: '{}' }).settled(false, [])
    const minutes = recorder.activity()
    expect(minutes).toHaveLength(60)
    expect(minutes.at(-2)).toEqual({ at: '2026-11-23T10:00:00.000Z', delivered: 1, retrying: 1, failed: 0 })
    expect(minutes.at(-1)).toEqual({ at: '2026-11-23T10:01:00.000Z', delivered: 0, retrying: 0, failed: 1 })
    state.now += 60 * 60_000
    expect(recorder.activity().every((m) => m.delivered + m.retrying + m.failed === 0)).toBe(true)
  })

  it('durable mode: a record is found by its traceId (forgotten with it), and reports arriving out of order keep the attempts in order', () => {
    const recorder = new ConsoleRecorder({ limit: 2 })
    recorder.accepted('web', track('A'), { body: '{}', traceId: 'p.1' })
    const url = 'http://a.test/hook'
    const error503 = new HttpError(503, 'Service Unavailable')
    // Attempt 2 (another process) is heard of before attempt 1's retry.
    recorder.traced('p.1')!.attempt(2, [url])
    recorder.traced('p.1')!.settled(false, [{ url, attempt: 2, status: 503, error: error503 }])
    recorder.traced('p.1')!.attempt(1, [url])
    recorder.traced('p.1')!.retry(1, [{ url, attempt: 1, status: 503, error: error503 }], 1_000)
    expect(recorder.get('1')!.delivery).toMatchObject({ outcome: 'failed', attempts: [{ attempt: 1 }, { attempt: 2 }] })
    expect(recorder.get('1')!.delivery.nextRetryAt).toBeUndefined()
    // Another process retried it by hand: the next attempt continues the numbering here too.
    recorder.reopened('p.1')
    recorder.traced('p.1')!.attempt(1, [url])
    expect(recorder.get('1')!.delivery).toMatchObject({ outcome: 'queued', attempts: [{ attempt: 1 }, { attempt: 2 }, { attempt: 3 }] })
    for (const name of ['B', 'C']) recorder.accepted('web', track(name), { body: '{}' })
    expect(recorder.traced('p.1')).toBeUndefined()
  })
})
