/**
 * Endpoint health in memory mode, through the admin endpoints, with an injected clock: the hour's
 * counts, failing, disabled after `disableAfter` of nothing but failures (no more requests, its
 * messages failed with the reason, one report to `onError`), enabled again with its missed
 * messages retried by hand.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { buildCollector } from '../../../src/collector/create-collector.js'
import { resolveConfig, type CollectorConfig } from '../../../src/collector/config.js'
import { isEndpointDisabledError, type Collector } from '../../../src/collector/index.js'
import { KEY, post, recordingFetch, track, until } from '../helpers.js'
import { admin, json, TOKEN } from '../console/support.js'
import { addOutcome, emptyOutcomes, merge } from '../../../src/collector/health/record.js'

const URL_IN = 'https://hooks.test/in'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const made: Collector[] = []
afterEach(async () => void (await Promise.all(made.splice(0).map((c) => c.close(0)))))

/** A collector whose health clock is `clock.now`, its receiver answering `status.value`. */
function healthCollector(overrides: Partial<CollectorConfig> = {}) {
  const clock = { now: Date.parse('2026-11-29T00:00:00.000Z') }
  const status = { value: 503 }
  const receiver = recordingFetch(() => new Response(status.value === 200 ? 'ok' : 'down', { status: status.value }))
  const reports: unknown[] = []
  const collector = buildCollector(resolveConfig({
    sources: [{ writeKey: KEY, name: 'web', webhooks: { urls: [{ url: URL_IN }], retryWindow: 0 } }],
    adminToken: TOKEN,
    fetch: receiver.fetch,
    onError: (error) => reports.push(error),
    ...overrides,
  }), { now: () => clock.now })
  made.push(collector)
  let n = 0
  /** Sends one message and waits until its delivery settled. */
  const send = async () => {
    const settled = collector.stats().forwarded + collector.stats().failed + 1
    expect((await collector.fetch(post({ batch: [track({ messageId: `m-${++n}` })] }))).status).toBe(200)
    await until(() => collector.stats().forwarded + collector.stats().failed === settled, 'the delivery settled')
  }
  const endpoints = async () => (await json(collector, admin('/v1/admin/endpoints'))).body.endpoints as Array<Record<string, unknown>>
  return { collector, clock, status, calls: receiver.calls, reports, send, endpoints }
}

describe('endpoint health (memory)', () => {
  it('counts the hour, fails, disables after disableAfter of failures only, reports once, enables and replays', async () => {
    const { collector, clock, status, calls, reports, send, endpoints } = healthCollector()
    expect(await endpoints()).toEqual([{ source: 'web', url: URL_IN, state: 'healthy', attempts1h: 0, failures1h: 0, consecutiveFailures: 0, lastError: null, disabledAt: null }])
    await send()
    expect(await endpoints()).toEqual([{ source: 'web', url: URL_IN, state: 'failing', attempts1h: 1, failures1h: 1, consecutiveFailures: 1, lastError: expect.stringContaining('503'), disabledAt: null }])

    clock.now += DAY - 1
    await send()
    // One ms short of a day of failures: failing, not disabled; the first attempt has left the hour.
    expect((await endpoints())[0]).toMatchObject({ state: 'failing', attempts1h: 1, failures1h: 1, consecutiveFailures: 2 })
    expect(reports).toEqual([])

    clock.now += 1
    await send()
    const disabledAt = new Date(clock.now).toISOString()
    expect((await endpoints())[0]).toMatchObject({ state: 'disabled', attempts1h: 2, failures1h: 2, consecutiveFailures: 3, disabledAt })
    expect(reports).toHaveLength(1)
    expect(isEndpointDisabledError(reports[0])).toBe(true)
    expect(reports[0]).toMatchObject({ name: 'EndpointDisabledError', code: 'ENDPOINT_DISABLED', source: 'web', url: URL_IN })
    expect((reports[0] as Error).message).toMatch(/every attempt to it failed for 24 hours \(3 failures since 2026-11-29T00:00:00.000Z; last error: .*503/)

    // Disabled: nothing is sent; the message fails with the reason, and is not reported again.
    const sent = calls.length
    await send()
    await send()
    expect(calls.length).toBe(sent)
    expect(reports).toHaveLength(1)
    const failed = (await json(collector, admin('/v1/admin/messages?outcome=failed'))).body.messages as any[]
    const notSent = expect.stringMatching(/^Not sent: https:\/\/hooks\.test\/in is disabled \(since /)
    const answered = `${URL_IN} answered 503.`
    expect(failed.map((m) => m.delivery.attempts.at(-1).results[0].error)).toEqual([notSent, notSent, answered, answered, answered])
    expect(failed[0].delivery.attempts.at(-1).results[0].error).toContain(`is disabled (since ${disabledAt}: every attempt to it had failed for 24 hours)`)
    expect((await endpoints())[0]).toMatchObject({ state: 'disabled', attempts1h: 2 })

    // Enabled with replay: only the two messages it missed are sent again, and delivered.
    status.value = 200
    const enabled = await json(collector, admin('/v1/admin/endpoints/enable', { method: 'POST', body: { source: 'web', url: URL_IN, replay: true } }))
    expect(enabled).toEqual({ status: 200, body: { success: true, wasDisabled: true, replayed: 2, notReplayed: 0, endpoint: expect.objectContaining({ state: 'healthy', disabledAt: null, consecutiveFailures: 0 }) } })
    await until(() => collector.stats().forwarded === 2, 'the missed messages delivered')
    expect(calls.slice(sent).map((c) => c.json.messageId).sort()).toEqual(['m-4', 'm-5'])
    expect((await endpoints())[0]).toMatchObject({ state: 'healthy', attempts1h: 4, failures1h: 2, consecutiveFailures: 0 })
    expect(reports).toHaveLength(1)
  })

  it('a success ends the streak: failures on both sides of it never add up to disableAfter', async () => {
    const { clock, status, reports, send, endpoints } = healthCollector({ disableAfter: HOUR })
    await send()
    clock.now += HOUR / 2
    status.value = 200
    await send()
    status.value = 500
    clock.now += 1
    await send()
    clock.now += HOUR - 1
    await send()
    expect((await endpoints())[0]).toMatchObject({ state: 'failing', consecutiveFailures: 2 })
    clock.now += 1
    await send()
    expect((await endpoints())[0]).toMatchObject({ state: 'disabled', consecutiveFailures: 3 })
    expect(reports).toHaveLength(1)
  })

  it('disableAfter 0 never disables; enabling a URL that is not disabled changes nothing and replays nothing', async () => {
    const { collector, clock, reports, send, endpoints } = healthCollector({ disableAfter: 0 })
    await send()
    clock.now += 30 * DAY
    await send()
    expect((await endpoints())[0]).toMatchObject({ state: 'failing', consecutiveFailures: 2 })
    expect(reports).toEqual([])
    const enabled = await json(collector, admin('/v1/admin/endpoints/enable', { method: 'POST', body: { source: 'web', url: URL_IN, replay: true } }))
    expect(enabled.body).toMatchObject({ success: true, wasDisabled: false, replayed: 0, endpoint: { state: 'healthy' } })
  })

  it('refuses bad enable requests, naming the problem, and answers only with the admin token', async () => {
    const { collector } = healthCollector()
    const enable = (body: unknown) => json(collector, admin('/v1/admin/endpoints/enable', { method: 'POST', body }))
    expect(await enable({ source: 'nope', url: URL_IN })).toMatchObject({ status: 400, body: { error: { code: 'BAD_REQUEST', field: 'source', message: 'Unknown source "nope"; known: web.' } } })
    expect(await enable({ source: 'web', url: 'https://elsewhere.test/' })).toMatchObject({ status: 404, body: { error: { message: expect.stringContaining('has no webhook URL "https://elsewhere.test/"') } } })
    expect(await enable({ source: 'web' })).toMatchObject({ status: 400, body: { error: { field: 'url' } } })
    expect(await enable({ source: 'web', url: URL_IN, replay: 'yes' })).toMatchObject({ status: 400, body: { error: { field: 'replay' } } })
    expect(await enable([])).toMatchObject({ status: 400 })
    expect((await collector.fetch(admin('/v1/admin/endpoints', { token: 'wrong-token-for-tests' }))).status).toBe(401)
    expect((await collector.fetch(admin('/v1/admin/endpoints', { method: 'POST', body: {} }))).status).toBe(405)
    expect((await collector.fetch(admin('/v1/admin/endpoints/enable'))).status).toBe(405)
  })

  it('refuses a disableAfter that is not an integer ≥ 0', () => {
    expect(() => resolveConfig({ sources: [{ writeKey: KEY, name: 'web' }], disableAfter: -1 })).toThrow('Expected `disableAfter` to be an integer ≥ 0, got `-1`.')
    expect(resolveConfig({ sources: [{ writeKey: KEY, name: 'web' }] }).disableAfter).toBe(DAY)
  })
})

describe('merging a URL\'s outcomes into its record', () => {
  const T0 = Date.parse('2026-11-29T00:00:00.000Z')
  const MINUTE = 60_000
  const failureAt = (at: number, error: string) => {
    const outcomes = emptyOutcomes()
    addOutcome(outcomes, at, error)
    return outcomes
  }

  it('gives the same record whichever process merges first: the streak runs from the earliest failure to the latest', () => {
    const early = failureAt(T0, 'answered 503')
    const late = failureAt(T0 + MINUTE, 'answered 502')
    // In the order they happened, and the other way round (the later failure's process merged first).
    const inOrder = merge(merge(undefined, early, T0 + MINUTE, MINUTE), late, T0 + MINUTE, MINUTE)
    const reversed = merge(merge(undefined, late, T0 + MINUTE, MINUTE), early, T0 + MINUTE, MINUTE)
    for (const record of [inOrder, reversed]) {
      expect(record).toMatchObject({ consecutiveFailures: 2, failingSince: T0, lastError: 'answered 502', lastErrorAt: T0 + MINUTE, disabledAt: T0 + MINUTE })
    }
    expect(reversed).toEqual(inOrder)
  })
})
