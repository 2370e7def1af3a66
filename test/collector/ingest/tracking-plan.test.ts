import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../../src/index.js'
import { compileTrackingPlan, type TrackingPlanConfig } from '../../../src/collector/ingest/tracking-plan.js'
import type { AcceptedBatch } from '../../../src/collector/ingest/accept.js'
import { resolveConfig } from '../../../src/collector/config.js'
import { buildCollector } from '../../../src/collector/create-collector.js'
import { createCollector } from '../../../src/collector/index.js'
import { KEY, post, recordingFetch, until } from '../helpers.js'

const AT = 'sources[0].trackingPlan'
const orderCompleted = {
  type: 'object',
  required: ['orderId', 'total'],
  properties: {
    orderId: { type: 'string' },
    total: { type: 'number' },
    email: { type: 'string', format: 'email' },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' } } } },
  },
  additionalProperties: false,
}
const plan = (extra: Partial<TrackingPlanConfig> = {}) =>
  compileTrackingPlan({ events: { 'Order Completed': orderCompleted, 'Logged Out': true }, ...extra }, AT)!
const track = (event: string, properties?: Record<string, unknown>) => ({ type: 'track', event, userId: 'u', ...(properties && { properties }) })

describe('compileTrackingPlan: verdicts', () => {
  it('judges integers beyond 2^53 as the numbers they are: maximum, minimum, exclusive bounds, multipleOf', () => {
    const big = compileTrackingPlan({ events: { E: { type: 'object', properties: {
      id: { type: 'integer', maximum: 2 ** 53 },
      low: { type: 'integer', minimum: -(2 ** 53) },
      below: { type: 'integer', exclusiveMaximum: 2 ** 60 },
      even: { type: 'integer', multipleOf: 2 },
      tenth: { multipleOf: 0.1 },
      list: { type: 'array', items: { type: 'integer', maximum: 2 ** 53 } },
      'a/b~c': { type: 'integer', maximum: 2 ** 53 },
      const: { type: 'integer', maximum: 2 ** 53 }, // a property named like a data keyword
    } } } }, AT)!
    const reason = (properties: Record<string, unknown>) => big.verdict(track('E', properties), true)?.reason
    // Each breaks the plan, though the nearest number would pass.
    expect(reason({ id: 9007199254740993n })).toMatch(/properties\.id must be <= 9007199254740992\.$/)
    expect(reason({ low: -9007199254740993n })).toMatch(/properties\.low must be >= -9007199254740992\.$/)
    expect(reason({ even: 1152921504606846977n })).toMatch(/properties\.even must be multiple of 2\.$/)
    expect(reason({ list: [1, 9007199254740993n] })).toMatch(/properties\.list\[1\] must be <= 9007199254740992\.$/)
    expect(reason({ 'a/b~c': 9007199254740993n })).toMatch(/must be <= 9007199254740992\.$/)
    expect(reason({ const: 9007199254740993n })).toMatch(/properties\.const must be <= 9007199254740992\.$/)
    // Each fits the plan, though the nearest number would not.
    expect(reason({ below: 1152921504606846975n })).toBeUndefined() // 2^60 − 1 rounds to 2^60
    expect(reason({ even: 1152921504606846978n, tenth: 12345678901234567891n, id: 9007199254740992n })).toBeUndefined()
    expect(reason({ even: 3n * 2n ** 60n })).toBeUndefined()
    // Numbers are judged as before.
    expect(reason({ id: 2 ** 53 + 2, even: 3, tenth: 0.5 })).toMatch(/properties\.id must be <= 9007199254740992; properties\.even must be multiple of 2\.$/)
    expect(big.verdict(track('E', { id: 5, even: 4, tenth: 0.5 }))).toBeUndefined()
  })

  it('judges multipleOf by the decimal digits a number was sent as (a float division fails 19.99 under 0.01)', () => {
    const prices = compileTrackingPlan({ events: { E: { type: 'object', properties: {
      price: { type: 'number', multipleOf: 0.01 },
      v: { multipleOf: 0.1 },
      half: { multipleOf: 0.5 },
      big: { multipleOf: 1e21 },
      tiny: { multipleOf: 1e-7 },
    } } } }, AT)!
    const reason = (properties: Record<string, unknown>) => prices.verdict(track('E', properties), true)?.reason
    for (const price of [19.99, 0.07, 1.1, 10, -19.99, 0, 123456.78]) expect(reason({ price }), String(price)).toBeUndefined()
    for (const v of [0.3, 0.7, 1.2, -0.3]) expect(reason({ v }), String(v)).toBeUndefined()
    expect(reason({ half: 2.5, big: 3e21, tiny: 3e-7 })).toBeUndefined()
    expect(reason({ price: 19.995 })).toMatch(/properties\.price must be multiple of 0\.01\.$/)
    expect(reason({ v: 0.30000000000000004 })).toMatch(/properties\.v must be multiple of 0\.1\.$/)
    expect(reason({ half: 2.25, big: 1.5e21, tiny: 1.5e-7 })).toMatch(/half must be multiple of 0\.5; properties\.big must be multiple of 1e\+21; properties\.tiny must be multiple of 1e-7\.$/)
  })

  it('passes planned events whose properties match, and every other message type', () => {
    expect(plan().verdict(track('Order Completed', { orderId: 'o', total: 1, email: 'a@b.test' }))).toBeUndefined()
    expect(plan().verdict(track('Logged Out'))).toBeUndefined()
    expect(plan({ unplanned: 'block' }).verdict({ type: 'identify', userId: 'u', traits: { total: 'x' } })).toBeUndefined()
  })

  it('names every broken field of a violation, and blocks it by default', () => {
    const verdict = plan().verdict(track('Order Completed', { total: '9.50', email: 'nope', items: [{ sku: 1 }], extra: 1 }))
    expect(verdict?.blocked).toBe(true)
    expect(verdict?.reason).toBe(
      'Event "Order Completed" does not match the tracking plan: properties.orderId is required; ' +
      'properties.extra is not in the plan; properties.total must be number; ' +
      'properties.email must match format "email"; properties.items[0].sku must be string.',
    )
  })

  it('checks a track without properties as {}', () => {
    expect(plan().verdict(track('Order Completed'))?.reason).toContain('properties.orderId is required; properties.total is required.')
  })

  it("violations: 'allow' forwards, still with the reason", () => {
    const verdict = plan({ violations: 'allow' }).verdict(track('Order Completed', { orderId: 1, total: 1 }))
    expect(verdict).toEqual({ blocked: false, reason: 'Event "Order Completed" does not match the tracking plan: properties.orderId must be string.' })
  })

  it("unplanned events are allowed by default and blocked with unplanned: 'block'", () => {
    expect(plan().verdict(track('Order Complete'))).toEqual({ blocked: false, reason: 'Event "Order Complete" is not in the tracking plan.' })
    expect(plan({ unplanned: 'block' }).verdict(track('Order Complete'))?.blocked).toBe(true)
    // Names are own keys: "constructor" is not planned.
    expect(plan({ unplanned: 'block' }).verdict(track('constructor'))?.blocked).toBe(true)
  })
})

describe('compileTrackingPlan: bad plans are ConfigErrors naming the event and the problem', () => {
  const compile = (input: unknown) => () => compileTrackingPlan(input, AT)
  it.each([
    [{ events: { E: { type: 'strin' } } }, 'sources[0].trackingPlan.events["E"]', /is not a valid JSON Schema: .*type/],
    [{ events: { E: { type: 'object', requried: ['a'] } } }, 'sources[0].trackingPlan.events["E"]', /unknown keyword: "requried"/],
    [{ events: { E: { type: 'string', format: 'emial' } } }, 'sources[0].trackingPlan.events["E"]', /is not a valid JSON Schema: unknown format "emial", at path "#"$/],
    [{ events: { E: 'string' } }, 'sources[0].trackingPlan.events["E"]', /to be a JSON Schema \(an object or a boolean\), got `"string"`/],
    [{ events: [] }, 'sources[0].trackingPlan.events', /to be an object \(event name → JSON Schema of its properties\), got an array/],
    [{ events: {}, unplanned: 'drop' }, 'sources[0].trackingPlan.unplanned', /to be 'allow' or 'block', got `"drop"`/],
    [{ events: {}, violation: 'block' }, 'sources[0].trackingPlan.violation', /Unknown option/],
    [{ events: {}, violation: 'block' }, 'sources[0].trackingPlan.violation', /^Unknown option `sources\[0\]\.trackingPlan\.violation` \(did you mean `sources\[0\]\.trackingPlan\.violations`\?\); known: events, unplanned, violations\.$/],
    ['plan.json', 'sources[0].trackingPlan', /to be an object \{ events, unplanned\?, violations\? \}/],
  ])('%j', (input, option, message) => {
    let error: unknown
    try {
      compile(input)()
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).option).toBe(option)
    expect((error as ConfigError).message).toMatch(message)
    expect((error as ConfigError).message).toContain(option)
  })

  it('no plan, no checks', () => {
    expect(compileTrackingPlan(undefined, AT)).toBeUndefined()
  })
})

describe('ingest with a source trackingPlan', () => {
  const trackingPlan = (extra: Partial<TrackingPlanConfig> = {}): TrackingPlanConfig => ({ events: { 'Order Completed': orderCompleted }, ...extra })
  const batch = {
    batch: [
      track('Order Completed', { orderId: 'o-1', total: 5 }),
      track('Order Completed', { orderId: 'o-2', total: '5' }),
      track('Order Complete', { orderId: 'o-3', total: 5 }),
      { type: 'identify', userId: 'u' },
    ].map((m, i) => ({ ...m, messageId: `m-${i}` })),
  }

  function planned(plan: TrackingPlanConfig, webhooks = true) {
    const receiver = recordingFetch()
    const accepted: AcceptedBatch[] = []
    const config = resolveConfig({
      adminToken: 'admin-token-for-tests',
      sources: [{
        writeKey: KEY,
        name: 'web',
        trackingPlan: plan,
        ...(webhooks && { webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }] } }),
      }],
      fetch: receiver.fetch,
    })
    const collector = buildCollector(config, { onAccepted: (b) => accepted.push(b) })
    return { collector, calls: receiver.calls, accepted }
  }

  it('forwards what passes, blocks violations, counts them, and keeps each reason; the batch succeeds', async () => {
    const { collector, calls, accepted } = planned(trackingPlan())
    const response = await collector.fetch(post(batch))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true })
    await until(() => collector.stats().forwarded === 3, 'three deliveries')
    expect(calls.map((c) => c.json.messageId)).toEqual(['m-0', 'm-2', 'm-3'])
    expect(collector.stats()).toMatchObject({ received: 4, blocked: 1, skipped: 0, forwarded: 3 })
    expect(accepted[0].violations).toEqual([
      { index: 1, blocked: true, reason: 'Event "Order Completed" does not match the tracking plan: properties.total must be number.' },
      { index: 2, blocked: false, reason: 'Event "Order Complete" is not in the tracking plan.' },
    ])
    await collector.close()
  })

  it('reports blocked messages in GET /v1/stats, overall and per source', async () => {
    const { collector } = planned(trackingPlan())
    expect((await collector.fetch(post(batch))).status).toBe(200)
    await until(() => collector.stats().forwarded === 3, 'three deliveries')
    const response = await collector.fetch(new Request('http://collector.test/v1/stats', { headers: { authorization: 'Bearer admin-token-for-tests' } }))
    expect(response.status).toBe(200)
    const body = await response.json()
    expect(body).toMatchObject({ accepted: 4, blocked: 1, skipped: 0, forwarded: 3 })
    expect(body.sources.web).toMatchObject({ accepted: 4, blocked: 1, forwarded: 3 })
    await collector.close()
  })

  it("unplanned: 'block' and violations: 'allow'", async () => {
    const { collector, calls } = planned(trackingPlan({ unplanned: 'block', violations: 'allow' }))
    expect((await collector.fetch(post(batch))).status).toBe(200)
    await until(() => collector.stats().forwarded === 3, 'three deliveries')
    expect(calls.map((c) => c.json.messageId)).toEqual(['m-0', 'm-1', 'm-3'])
    expect(collector.stats()).toMatchObject({ received: 4, blocked: 1, forwarded: 3 })
    await collector.close()
  })

  it('counts blocked messages apart from skipped ones when the source forwards nowhere', async () => {
    const { collector } = planned(trackingPlan(), false)
    expect((await collector.fetch(post(batch))).status).toBe(200)
    expect(collector.stats()).toMatchObject({ received: 4, blocked: 1, skipped: 3, forwarded: 0 })
    await collector.close()
  })

  it('checks integers beyond 2^53 (read exactly, as bigints) against number and integer schemas, and forwards their digits', async () => {
    const ids = { 'Order Completed': { type: 'object', properties: { id: { type: 'integer' }, total: { type: 'number', maximum: 100 } } } }
    const { collector, calls } = planned({ events: ids })
    const body = '{"batch":[' +
      '{"type":"track","messageId":"m-0","userId":"u","event":"Order Completed","properties":{"id":9223372036854775807,"total":5}},' +
      '{"type":"track","messageId":"m-1","userId":"u","event":"Order Completed","properties":{"id":"9223372036854775807","total":5}},' +
      '{"type":"track","messageId":"m-2","userId":"u","event":"Order Completed","properties":{"id":1,"total":12345678901234567890}}]}'
    expect((await collector.fetch(post(body))).status).toBe(200)
    await until(() => collector.stats().forwarded === 1, 'one delivery')
    expect(collector.stats()).toMatchObject({ received: 3, blocked: 2, forwarded: 1 })
    expect(calls[0].body).toContain('"id":9223372036854775807')
    await collector.close()
  })

  it('the console shows a blocked message with its reason, beside the forwarded ones', async () => {
    const receiver = recordingFetch()
    const collector = createCollector({
      sources: [{ writeKey: KEY, name: 'web', trackingPlan: trackingPlan(), webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }] } }],
      adminToken: 'admin-token-for-tests',
      fetch: receiver.fetch,
    })
    expect((await collector.fetch(post(batch))).status).toBe(200)
    await until(() => collector.stats().forwarded === 3, 'three deliveries')
    const response = await collector.fetch(new Request('http://collector.test/v1/admin/messages?source=web', { headers: { authorization: 'Bearer admin-token-for-tests' } }))
    const { messages } = (await response.json()) as { messages: Array<{ message: { messageId: string }; delivery: { outcome: string; reason?: string } }> }
    const byId = Object.fromEntries(messages.map((m) => [m.message.messageId, m.delivery]))
    expect(byId['m-1']).toEqual({ outcome: 'blocked', reason: 'Event "Order Completed" does not match the tracking plan: properties.total must be number.', attempts: [] })
    expect(byId['m-0'].outcome).toBe('delivered')
    expect(byId['m-2'].outcome).toBe('delivered') // unplanned, allowed
    await collector.close()
  })

  it('a bad plan fails createCollector with a ConfigError naming the source, the event and the problem', () => {
    const make = () => createCollector({ sources: [{ writeKey: KEY, name: 'web', trackingPlan: { events: { 'Order Completed': { type: 'object', properties: { total: { type: 'numbr' } } } } } }] })
    expect(make).toThrow(ConfigError)
    expect(make).toThrow(/^`sources\[0\]\.trackingPlan\.events\["Order Completed"\]` is not a valid JSON Schema: .*type/)
  })
})
