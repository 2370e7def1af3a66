import { describe, expect, it } from 'vitest'
import { isValidationError, toWebhookPayload, type CollectedMessage } from '../../src/webhooks/index.js'

const context = { ip: '203.0.113.9', library: { name: 'isomorphic-analytics', version: '0.1.0' } }
const common = {
  messageId: 'a3b1c2d4-0000-4000-8000-000000000001',
  anonymousId: 'anon-1',
  userId: 'user-1',
  timestamp: '2026-11-22T10:00:00.000Z',
  context,
  integrations: { All: false, Webhooks: true },
}

describe('toWebhookPayload', () => {
  it('page: version 1, properties, name/category, ids, timestamp and context, then integrations', () => {
    const properties = { path: '/pricing', referrer: 'https://example.com', title: 'Pricing', url: 'https://acme.test/pricing' }
    const payload = toWebhookPayload({ ...common, type: 'page', name: 'Pricing', category: 'Docs', properties })
    expect(payload).toStrictEqual({
      version: 1,
      type: 'page',
      messageId: common.messageId,
      anonymousId: 'anon-1',
      userId: 'user-1',
      name: 'Pricing',
      category: 'Docs',
      properties,
      timestamp: '2026-11-22T10:00:00.000Z',
      context,
      integrations: common.integrations,
    })
  })

  it('forwards every other member the sender sent, in its order, after the payload\'s own; never writeKey', () => {
    const sent = {
      ...common,
      type: 'track' as const,
      event: 'E',
      writeKey: 'KEY',
      channel: 'server',
      originalTimestamp: '2026-11-22T09:59:59.000Z',
      sentAt: '2026-11-22T10:00:01.000Z',
      receivedAt: '2026-11-22T10:00:02.000Z',
      _metadata: { nodeVersion: '20.0.0' },
      version: 2,
      constructor: 'a member like any other',
    }
    const payload = toWebhookPayload(sent)
    expect(Object.keys(payload)).toEqual([
      'version', 'type', 'messageId', 'anonymousId', 'userId', 'event', 'properties', 'timestamp', 'context',
      'integrations', 'channel', 'originalTimestamp', 'sentAt', 'receivedAt', '_metadata', 'constructor',
    ])
    expect(payload).toMatchObject({ version: 1, channel: 'server', _metadata: { nodeVersion: '20.0.0' }, constructor: 'a member like any other' })
    expect(payload).not.toHaveProperty('writeKey')
    const proto = toWebhookPayload(JSON.parse('{"type":"track","userId":"u","event":"E","__proto__":{"polluted":true}}'))
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype)
    expect(JSON.stringify(proto)).toContain('"__proto__":{"polluted":true}')
  })

  it('gives a message without messageId a random one, second after type as always; keeps one it has', () => {
    const payload = toWebhookPayload({ type: 'track', userId: 'u', event: 'E' })
    expect(payload.messageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(Object.keys(payload).slice(0, 3)).toEqual(['version', 'type', 'messageId'])
    expect(toWebhookPayload({ type: 'track', userId: 'u', event: 'E' }).messageId).not.toBe(payload.messageId)
    expect(toWebhookPayload({ ...common, type: 'track', event: 'E' }).messageId).toBe(common.messageId)
  })

  it("page: Go v2's `traits` become `properties` when properties are absent (and stay, as sent); properties win when both exist", () => {
    const fromTraits = toWebhookPayload({ type: 'page', userId: 'u', traits: { path: '/a' }, timestamp: common.timestamp })
    expect(fromTraits).toMatchObject({ properties: { path: '/a' }, traits: { path: '/a' } })
    const both = toWebhookPayload({ type: 'page', userId: 'u', traits: { path: '/a' }, properties: { path: '/b' } })
    expect(both).toMatchObject({ properties: { path: '/b' } })
  })

  it('screen: name and properties, context passed through untouched', () => {
    const device = { device: { model: 'Pixel 9', type: 'android' }, os: { name: 'Android', version: '15' }, app: { build: '42', name: 'Acme', version: '1.2.0' } }
    const payload = toWebhookPayload({ type: 'screen', userId: 'u', name: 'Home', properties: { tab: 'feed' }, context: device, timestamp: common.timestamp })
    expect(payload).toStrictEqual({
      version: 1, type: 'screen', messageId: payload.messageId, userId: 'u', name: 'Home', properties: { tab: 'feed' }, timestamp: common.timestamp, context: device,
    })
    expect(payload.context).toBe(device)
  })

  it("identify: traits from context.traits when the message has none (RudderStack's JS SDK)", () => {
    const payload = toWebhookPayload({ ...common, type: 'identify', context: { traits: { plan: 'pro' } } })
    expect(payload).toMatchObject({ type: 'identify', traits: { plan: 'pro' }, context: { traits: { plan: 'pro' } } })
    expect(toWebhookPayload({ ...common, type: 'identify', traits: { a: 1 }, context: { traits: { b: 2 } } })).toMatchObject({ traits: { a: 1 } })
  })

  it('identify: traits with string and number values', () => {
    const payload = toWebhookPayload({ ...common, type: 'identify', traits: { name: 'Ada', age: 36 } })
    expect(payload).toMatchObject({ version: 1, type: 'identify', userId: 'user-1', traits: { name: 'Ada', age: 36 } })
  })

  it('track: event and properties', () => {
    const payload = toWebhookPayload({ ...common, type: 'track', event: 'Order Completed', properties: { total: 12.5 } })
    expect(payload).toMatchObject({ version: 1, type: 'track', event: 'Order Completed', properties: { total: 12.5 } })
  })

  it('group: groupId and traits whose keys contain spaces are untouched', () => {
    const traits = { 'Company Name': 'Acme Inc', 'Employee Count': 120, plan_tier: 'gold' }
    const payload = toWebhookPayload({ ...common, type: 'group', groupId: 'g-1', traits })
    expect(payload).toMatchObject({ version: 1, type: 'group', groupId: 'g-1', userId: 'user-1' })
    expect(Object.keys((payload as { traits: object }).traits)).toEqual(['Company Name', 'Employee Count', 'plan_tier'])
  })

  it('alias: previousId and userId, and the seed\'s "Previous ID" and "User ID"', () => {
    const payload = toWebhookPayload({ type: 'alias', previousId: 'anon-1', userId: 'user-1', timestamp: common.timestamp, messageId: 'm-1' })
    expect(payload).toStrictEqual({
      version: 1,
      type: 'alias',
      messageId: 'm-1',
      userId: 'user-1',
      previousId: 'anon-1',
      'Previous ID': 'anon-1',
      'User ID': 'user-1',
      timestamp: common.timestamp,
      context: {},
    })
  })

  it('delete: only type, userId and timestamp (no version, context or ids)', () => {
    const payload = toWebhookPayload({ type: 'delete', userId: 'user-1', timestamp: '2026-11-22T10:00:00Z' })
    expect(payload).toStrictEqual({ type: 'delete', userId: 'user-1', timestamp: '2026-11-22T10:00:00.000Z' })
    const extra = toWebhookPayload({ type: 'delete', userId: 'u', context: { a: 1 }, messageId: 'm' } as Record<string, unknown>)
    expect(Object.keys(extra).sort()).toEqual(['timestamp', 'type', 'userId'])
    expect(Date.parse(extra.timestamp)).not.toBeNaN()
  })

  it('normalises timestamps to ISO 8601 with milliseconds in UTC', () => {
    const cases: Array<[Date | string, string]> = [
      [new Date(Date.UTC(2026, 10, 22, 10, 0, 0, 7)), '2026-11-22T10:00:00.007Z'],
      ['2026-11-22T12:30:00+02:30', '2026-11-22T10:00:00.000Z'],
      ['2026-11-22T10:00:00.123456Z', '2026-11-22T10:00:00.123Z'],
      ['2026-11-22', '2026-11-22T00:00:00.000Z'],
    ]
    for (const [timestamp, expected] of cases) {
      expect(toWebhookPayload({ type: 'track', event: 'e', userId: 'u', timestamp }).timestamp).toBe(expected)
    }
    const now = toWebhookPayload({ type: 'track', event: 'e', userId: 'u' }).timestamp
    expect(now).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  })

  it('defaults context, properties and traits to {} and omits absent user ids', () => {
    const payload = toWebhookPayload({ type: 'track', event: 'e', anonymousId: 'a', timestamp: common.timestamp })
    expect(payload).toStrictEqual({ version: 1, type: 'track', messageId: payload.messageId, anonymousId: 'a', event: 'e', properties: {}, timestamp: common.timestamp, context: {} })
  })

  it('does not mutate its argument', () => {
    const message: CollectedMessage = { ...common, type: 'track', event: 'e', properties: { a: 1 } }
    const copy = structuredClone(message)
    toWebhookPayload(message)
    expect(message).toStrictEqual(copy)
  })

  it('throws ValidationError naming the field for an unknown type or a bad member', () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ type: 'screenview', userId: 'u' }, 'type', /one of page, screen, identify, track, alias, group, delete/],
      [{ userId: 'u' }, 'type', /`type`/],
      [null, 'message', /object/],
      [{ type: 'track', userId: 'u' }, 'event', /You must pass 'event'/],
      [{ type: 'group', userId: 'u' }, 'groupId', /groupId/],
      [{ type: 'alias', userId: 'u' }, 'previousId', /previousId/],
      [{ type: 'identify' }, 'userId', /anonymousId' or 'userId/],
      [{ type: 'track', event: 'e', userId: 'u', timestamp: 'yesterday' }, 'timestamp', /timestamp/],
      [{ type: 'delete' }, 'userId', /userId/],
      [{ type: 'delete', userId: 'u', timestamp: 'soon' }, 'timestamp', /timestamp/],
      [{ type: 'track', event: 'e', userId: 'u', properties: [] }, 'properties', /object/],
    ]
    for (const [input, field, message] of cases) {
      let error: unknown
      try {
        toWebhookPayload(input as never)
      } catch (e) {
        error = e
      }
      expect(isValidationError(error), JSON.stringify(input)).toBe(true)
      expect((error as { field: string }).field).toBe(field)
      expect((error as Error).message).toMatch(message)
    }
  })

  it('refuses, naming the field, what JSON would change silently: Map and Set (as the client does), NaN and Infinity', () => {
    const refused = (properties: Record<string, unknown>, traits?: Record<string, unknown>) => {
      try {
        toWebhookPayload(traits ? { type: 'identify', userId: 'u', traits } : { type: 'track', event: 'E', userId: 'u', properties })
      } catch (error) {
        expect(isValidationError(error)).toBe(true)
        return [(error as { field: string }).field, (error as Error).message]
      }
      return undefined
    }
    expect(refused({ tags: new Set(['a']) })).toEqual(['properties.tags', 'Cannot send `properties.tags`: it is a Set, which JSON would turn into `{}`. Pass [...set] instead.'])
    expect(refused({ nested: { byId: new Map([['a', 1]]) } })?.[0]).toBe('properties.nested.byId')
    expect(refused({ n: NaN })).toEqual(['properties.n', 'Cannot send `properties.n`: it is NaN, which JSON would turn into `null`. Pass a finite number or null instead.'])
    expect(refused({ list: [1, -Infinity] })?.[0]).toBe('properties.list[1]')
    expect(refused({}, { score: Infinity })?.[0]).toBe('traits.score')
    // What JSON keeps, or writes on purpose, passes: null, a Date, a toJSON.
    expect(refused({ none: null, when: new Date(0), custom: { toJSON: () => NaN } })).toBeUndefined()
  })

  it('timestamp: the canonical ISO form kept as given, any other form (offset, no millis, hour 24, Date) normalised', () => {
    const at = (timestamp: unknown) => (toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp } as CollectedMessage) as { timestamp: string }).timestamp
    expect(at('2026-11-22T10:00:00.123Z')).toBe('2026-11-22T10:00:00.123Z')
    expect(at('2026-11-22T10:00:00Z')).toBe('2026-11-22T10:00:00.000Z')
    expect(at('2026-11-22T12:00:00.000+02:00')).toBe('2026-11-22T10:00:00.000Z')
    expect(at('2026-11-22T24:00:00.000Z')).toBe('2026-11-23T00:00:00.000Z')
    expect(at(new Date('2026-11-22T10:00:00.5Z'))).toBe('2026-11-22T10:00:00.500Z')
  })
})
