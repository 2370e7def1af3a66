/**
 * `POST /v1/admin/replay` in memory mode: the kept payloads of a window sent again with the same
 * bytes, `X-Signature` and `webhook-id`, failed ones only or all, to every URL or one; marked as
 * replays in `GET /v1/admin/messages`; following the retry policy; what is past the retention
 * (an injected clock: fake `Date`) or the bound counted as no longer kept; bad requests refused
 * naming the field.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MemoryKept, keptPayload } from '../../../src/collector/replay/kept.js'
import { post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from '../console/support.js'

afterEach(async () => {
  vi.useRealTimers()
  await closeCollectors()
})

const STANDARD = `whsec_${Buffer.from('replay tests standard webhooks secret').toString('base64')}`
const SECOND = 'https://hooks.test/second'

/**
 * `web` forwarding to two URLs, signed both ways; `refuse(call)`: answered 400 (failed for good
 * at once), or the status it gives.
 */
function setup(refuse: (call: { url: string; json: Record<string, unknown> }) => boolean | number, overrides = {}) {
  return consoleCollector({
    sources: [
      { writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: 'https://hooks.test/in' }, { url: SECOND }], sharedSecret: 'a-long-shared-secret-7890', standardSecrets: [STANDARD] } },
      { writeKey: 'OTHER', name: 'app' },
    ],
    ...overrides,
  }, (call) => {
    const refused = refuse(call)
    return new Response('', { status: typeof refused === 'number' ? refused : refused ? 400 : 200 })
  })
}

const settled = (collector: { stats(): { pending: number } }) => until(() => collector.stats().pending === 0, 'deliveries settled')
const replay = (body: unknown) => admin('/v1/admin/replay', { method: 'POST', body })
const WIDE = { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' }

describe('POST /v1/admin/replay (memory)', () => {
  it('sends the failed payloads of the window again: same bytes, X-Signature and webhook-id; marked as replays', async () => {
    let down = true
    const { collector, calls } = setup((call) => down && call.json.messageId === 'm-2')
    // The big integer's digits are kept: the same bytes, not a re-serialised copy.
    const body = `{"batch":[${['m-1', 'm-2', 'm-3'].map((id) => JSON.stringify(track({ messageId: id }))).join(',')}],"sentAt":"2026-11-22T10:00:01.000Z"}`.replace('"m-2"', '"m-2","properties":{"total":9223372036854775807}')
    expect((await collector.fetch(post(body))).status).toBe(200)
    await settled(collector)
    expect(collector.stats()).toMatchObject({ forwarded: 2, failed: 1 })
    const first = calls.filter((c) => c.json.messageId === 'm-2')
    expect(first).toHaveLength(2)
    expect(first[0].body).toContain('"total":9223372036854775807')

    down = false
    const answer = await json(collector, replay({ source: 'web', ...WIDE }))
    expect(answer).toEqual({ status: 202, body: { success: true, replaying: 1, unavailable: 0 } })
    await settled(collector)
    const again = calls.slice(6)
    expect(again.map((c) => c.url).sort()).toEqual(['https://hooks.test/in', SECOND])
    for (const call of again) {
      expect(call.body).toBe(first[0].body)
      expect(call.headers['x-signature']).toBe(first[0].headers['x-signature'])
      expect(call.headers['webhook-id']).toBe(first[0].headers['webhook-id'])
      expect(call.headers['webhook-signature']).toMatch(/^v1,/)
    }
    const messages = (await json(collector, admin('/v1/admin/messages'))).body.messages
    const replays = messages.filter((m: any) => m.replay === true)
    expect(replays).toHaveLength(1)
    expect(replays[0]).toMatchObject({ source: 'web', type: 'track', message: { messageId: 'm-2' }, delivery: { outcome: 'delivered' } })
    // The original stays as it was: failed, not a replay.
    expect(messages.filter((m: any) => m.message.messageId === 'm-2' && m.replay === undefined).map((m: any) => m.delivery.outcome)).toEqual(['failed'])
    // Delivered now: a second replay of the failed ones finds none (kept again with its outcome).
    expect((await json(collector, replay({ source: 'web', ...WIDE }))).body).toMatchObject({ replaying: 0, unavailable: 0 })
  })

  it("`outcome: 'all'` replays every kept payload of the window, oldest first; `url` sends to that URL only; the window bounds it", async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true })
    vi.setSystemTime(Date.parse('2026-11-28T09:00:00Z'))
    const { collector, calls } = setup(() => false)
    await collector.fetch(post({ batch: [track({ messageId: 'early' })] }))
    await settled(collector)
    vi.setSystemTime(Date.parse('2026-11-28T10:00:00Z'))
    await collector.fetch(post({ batch: [track({ messageId: 'a' }), track({ messageId: 'b' })] }))
    await settled(collector)
    const before = calls.length

    const answer = await json(collector, replay({ source: 'web', from: '2026-11-28T09:30:00Z', to: Date.parse('2026-11-28T10:30:00Z'), outcome: 'all', url: SECOND }))
    expect(answer).toEqual({ status: 202, body: { success: true, replaying: 2, unavailable: 0 } })
    await settled(collector)
    const again = calls.slice(before)
    expect(again.map((c) => [c.url, c.json.messageId])).toEqual([[SECOND, 'a'], [SECOND, 'b']])
    const replays = (await json(collector, admin('/v1/admin/messages'))).body.messages.filter((m: any) => m.replay)
    // Only the URL replayed to is attempted.
    expect(replays.map((m: any) => m.delivery.attempts[0].results.map((r: any) => r.url))).toEqual([[SECOND], [SECOND]])
  })

  it('follows the retry policy: a replay answered 503 is retried, then delivered', async () => {
    let replaying = false
    let refusals = 0
    const { collector, calls } = setup((call) => {
      if (!replaying) return call.json.messageId === 'x'
      return call.url === SECOND && refusals++ === 0 ? 503 : 200
    }, {})
    await collector.fetch(post({ batch: [track({ messageId: 'x' })] }))
    await settled(collector)
    replaying = true
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const answer = await json(collector, replay({ source: 'web', ...WIDE, url: SECOND }))
    expect(answer.body).toMatchObject({ replaying: 1 })
    await until(() => calls.length === 3, 'the first attempt of the replay')
    await vi.advanceTimersByTimeAsync(60_000)
    await settled(collector)
    expect(calls.slice(2).map((c) => c.url)).toEqual([SECOND, SECOND])
    const record = (await json(collector, admin('/v1/admin/messages'))).body.messages.find((m: any) => m.replay)
    expect(record.delivery).toMatchObject({ outcome: 'delivered' })
    expect(record.delivery.attempts.map((a: any) => a.results[0].status)).toEqual([503, 200])
  })

  it('what is past the retention is no longer kept, and counted as such (a fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true })
    vi.setSystemTime(Date.parse('2026-11-28T09:00:00Z'))
    const { collector } = setup((call) => call.json.messageId !== 'ok', { retention: 3_600_000 })
    await collector.fetch(post({ batch: [track({ messageId: 'old-1' }), track({ messageId: 'old-2' }), track({ messageId: 'ok' })] }))
    await settled(collector)
    vi.setSystemTime(Date.parse('2026-11-28T09:59:00Z'))
    await collector.fetch(post({ batch: [track({ messageId: 'new' })] }))
    await settled(collector)
    expect((await json(collector, replay({ source: 'web', ...WIDE }))).body).toMatchObject({ replaying: 3, unavailable: 0 })
    await settled(collector)
    // Past the hour for the first three (the replays keep their first acceptance time).
    vi.setSystemTime(Date.parse('2026-11-28T10:00:30Z'))
    expect((await json(collector, replay({ source: 'web', ...WIDE }))).body).toMatchObject({ replaying: 1, unavailable: 2 })
    await settled(collector)
    expect((await json(collector, replay({ source: 'web', ...WIDE, outcome: 'all' }))).body).toMatchObject({ replaying: 1, unavailable: 3 })
    // A window after the dropped ones' minute counts none of them.
    expect((await json(collector, replay({ source: 'web', from: '2026-11-28T09:30:00Z', to: '2026-11-28T11:00:00Z', outcome: 'all' }))).body).toMatchObject({ replaying: 1, unavailable: 0 })
  })

  it('with a retention of 0 nothing is kept: a replay is a 409 naming the option', async () => {
    const { collector } = setup((call) => call.json.messageId === 'm-1', { retention: 0 })
    await collector.fetch(post({ batch: [track({ messageId: 'm-1' }), track({ messageId: 'm-2' })] }))
    await settled(collector)
    const answer = await json(collector, replay({ source: 'web', ...WIDE, outcome: 'all' }))
    expect(answer).toMatchObject({ status: 409, body: { error: { code: 'CONFLICT', message: expect.stringMatching(/`retention` is 0/) } } })
    // The request is still checked first.
    expect((await json(collector, replay({ source: 'nope', ...WIDE }))).status).toBe(400)
  })

  it.each<[Record<string, unknown>, string, RegExp]>([
    [{ source: 'web', from: 'yesterday', to: WIDE.to }, 'from', /ISO 8601 date.*"yesterday"/],
    [{ source: 'web', from: WIDE.from, to: '2026-13-45' }, 'to', /ISO 8601/],
    [{ source: 'web', from: WIDE.to, to: WIDE.from }, 'from', /no later than `to`/],
    [{ source: 'nope', ...WIDE }, 'source', /Unknown source `"nope"`; known: web, app/],
    [{ source: 'app', ...WIDE }, 'source', /destination off/],
    [{ ...WIDE }, 'source', /source's name/],
    [{ source: 'web', ...WIDE, outcome: 'some' }, 'outcome', /"failed" or "all"/],
    [{ source: 'web', ...WIDE, url: 'https://elsewhere.test/' }, 'url', /one of source "web"'s 2 URL\(s\)/],
    [{ source: 'web', ...WIDE, urls: [] }, 'urls', /Unknown field `urls`/],
  ])('refuses %j naming `%s`', async (body, field, message) => {
    const { collector } = setup(() => false)
    const answer = await json(collector, replay(body))
    expect(answer.status).toBe(400)
    expect(answer.body.error).toMatchObject({ field, message: expect.stringMatching(message) })
  })

  it('answers only POST, with the admin token', async () => {
    const { collector } = setup(() => false)
    expect((await collector.fetch(admin('/v1/admin/replay'))).status).toBe(405)
    expect((await collector.fetch(admin('/v1/admin/replay', { method: 'POST', body: { source: 'web', ...WIDE }, token: 'wrong-token-0123456789' }))).status).toBe(401)
  })
})

describe('MemoryKept', () => {
  it('keeps the latest payloads within its bound; those pushed out are counted by their minute', async () => {
    const kept = new MemoryKept(86_400_000, () => 1_000_000, { count: 2, bytes: 1_000 })
    kept.keep([keptPayload('web', '{"n":1}', 60_000, true), keptPayload('web', '{"n":2}', 120_000, false), keptPayload('web', '{"n":3}', 180_000, true)])
    expect(await kept.window('web', 0, 1_000_000, false)).toMatchObject({ kept: [{ body: '{"n":2}' }, { body: '{"n":3}' }], unavailable: 1 })
    expect(await kept.window('web', 0, 1_000_000, true)).toMatchObject({ kept: [{ body: '{"n":3}' }], unavailable: 1 })
    expect(await kept.window('web', 120_000, 1_000_000, true)).toMatchObject({ unavailable: 0 })
    // Bytes bound: one large body pushes out the others.
    kept.keep([keptPayload('web', `{"big":"${'x'.repeat(990)}"}`, 240_000, false)])
    expect(await kept.window('web', 0, 1_000_000, false)).toMatchObject({ kept: [{ at: 240_000 }], unavailable: 3 })
    // The same bytes kept again replace the entry (one id), with the new outcome.
    kept.keep([keptPayload('web', `{"big":"${'x'.repeat(990)}"}`, 240_000, true)])
    expect((await kept.window('web', 0, 1_000_000, true)).kept).toHaveLength(1)
  })
})
