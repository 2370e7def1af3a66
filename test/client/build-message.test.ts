import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import type { MessageType } from '../../src/message/types.js'
import { buildMessage, type MessageDefaults } from '../../src/client/build-message.js'
import { collector, createTestClient, installServer, trackInput } from '../helpers/client.js'
import { deepFreeze } from '../helpers/freeze.js'

installServer()

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const LIBRARY = { name: 'isomorphic-analytics', version }

const INPUTS: Record<MessageType, Record<string, unknown>> = {
  identify: { userId: 'u1', traits: { email: 'a@b.c' } },
  track: { event: 'Clicked', anonymousId: 'a1', properties: { x: 1 } },
  page: { userId: 'u1', name: 'Home', category: 'Docs', properties: { path: '/' } },
  screen: { userId: 'u1', name: 'Settings', properties: { tab: 2 } },
  group: { groupId: 'g1', userId: 'u1', traits: { plan: 'pro' } },
  alias: { userId: 'u1', previousId: 'p1' },
}

describe('the returned message', () => {
  it.each(Object.keys(INPUTS) as MessageType[])('%s: type, messageId, timestamp, context.library and the fields', (type) => {
    vi.useFakeTimers({ now: new Date('2026-11-22T10:00:00.123Z') })
    const client = createTestClient()
    const input = deepFreeze(structuredClone(INPUTS[type]))
    const sent = (client[type] as (m: unknown) => Record<string, unknown>)(input)
    expect(sent).toEqual({ ...INPUTS[type], type, messageId: expect.stringMatching(UUID_V4), timestamp: '2026-11-22T10:00:00.123Z', context: { library: LIBRARY } })
    expect(sent.timestamp).toMatch(ISO_MS)
    expect(input).toEqual(INPUTS[type])
  })

  it('has a fresh UUID v4 messageId per call', () => {
    const client = createTestClient({ maxQueueSize: 5000, flushAt: 5000 })
    const ids = new Set<string>()
    for (let i = 0; i < 2000; i++) ids.add(client.track(trackInput(i)).messageId)
    expect(ids.size).toBe(2000)
    for (const id of ids) expect(id).toMatch(UUID_V4)
  })

  it('keeps a given messageId and timestamp (ISO string as given, Date as its ISO string)', () => {
    const client = createTestClient()
    const withString = client.track(trackInput(0, { messageId: 'my-id', timestamp: '2020-01-02T03:04:05+02:00' }))
    expect(withString.messageId).toBe('my-id')
    expect(withString.timestamp).toBe('2020-01-02T03:04:05+02:00')
    const date = new Date('2019-05-06T07:08:09.010Z')
    const withDate = client.track(trackInput(0, { timestamp: deepFreeze(date) }))
    expect(withDate.timestamp).toBe('2019-05-06T07:08:09.010Z')
  })

  it('is exactly what is sent', async () => {
    const wire = collector()
    const client = createTestClient()
    const sent = client.track(trackInput(0, { properties: { price: 9.5, tags: ['a', 'b'] } }))
    await client.flush()
    expect(wire.messages()).toEqual([sent])
    expect(wire.requests[0].text).toContain(JSON.stringify(sent))
  })
})

describe('input is never mutated', () => {
  it('deep-frozen inputs of every call are accepted and left as they were', () => {
    const client = createTestClient({
      context: deepFreeze({ app: { name: 'A', build: 1 } }),
      integrations: deepFreeze({ All: true, Mixpanel: { key: 'k' } }),
    })
    for (const type of Object.keys(INPUTS) as MessageType[]) {
      const input = { ...INPUTS[type], context: { app: { build: 2 }, ip: '1.2.3.4' }, integrations: { Mixpanel: { other: 1 } }, messageId: 'm', timestamp: new Date(0) }
      const snapshot = structuredClone(input)
      deepFreeze(input)
      ;(client[type] as (m: unknown) => unknown)(input)
      expect(input).toEqual(snapshot)
    }
  })

  it('the caller may change its object afterwards without changing what is sent', async () => {
    const wire = collector()
    const client = createTestClient()
    const input = { ...trackInput(0), properties: { step: 1 } }
    client.track(input)
    input.properties.step = 2
    await client.flush()
    expect(wire.messages()[0].properties).toEqual({ step: 1 })
  })
})

describe('page traits', () => {
  it('are sent as properties (the Go v2 name)', async () => {
    const wire = collector()
    const client = createTestClient()
    const sent = client.page(deepFreeze({ userId: 'u', name: 'Home', traits: { path: '/home' } }))
    expect(sent.properties).toEqual({ path: '/home' })
    expect('traits' in sent).toBe(false)
    await client.flush()
    expect(wire.messages()[0]).toMatchObject({ type: 'page', properties: { path: '/home' } })
    expect(wire.messages()[0]).not.toHaveProperty('traits')
  })

  it('merge with properties, properties winning', () => {
    const client = createTestClient()
    const sent = client.page(deepFreeze({ userId: 'u', traits: { a: 1, b: 1 }, properties: { b: 2 } }))
    expect(sent.properties).toEqual({ a: 1, b: 2 })
  })

  it('stay traits on identify and group', () => {
    const client = createTestClient()
    expect(client.identify({ userId: 'u', traits: { a: 1 } })).toMatchObject({ traits: { a: 1 } })
    expect(client.group({ userId: 'u', groupId: 'g', traits: { a: 1 } })).toMatchObject({ traits: { a: 1 } })
  })
})

describe('default context and integrations', () => {
  it('are deep-merged under the message’s own, mutating neither', async () => {
    const wire = collector()
    const defaults = { app: { name: 'Shop', version: '1.0' }, locale: 'en-GB', library: { name: 'spoof', version: '0' } }
    const integrations = { All: false, Mixpanel: { apiKey: 'k', region: 'eu' } }
    const client = createTestClient({ context: deepFreeze(structuredClone(defaults)), integrations: deepFreeze(structuredClone(integrations)) })
    const own = deepFreeze({ app: { version: '2.0' }, ip: '10.0.0.1' })
    const ownIntegrations = deepFreeze({ Mixpanel: { region: 'us' }, Webhooks: true })
    const sent = client.track(trackInput(0, { context: own, integrations: ownIntegrations }))
    expect(sent.context).toEqual({ app: { name: 'Shop', version: '2.0' }, locale: 'en-GB', ip: '10.0.0.1', library: LIBRARY })
    expect(sent.integrations).toEqual({ All: false, Mixpanel: { apiKey: 'k', region: 'us' }, Webhooks: true })

    // A second message without its own gets the defaults alone, untouched by the first merge.
    const plain = client.track(trackInput(1))
    expect(plain.context).toEqual({ app: { name: 'Shop', version: '1.0' }, locale: 'en-GB', library: LIBRARY })
    expect(plain.integrations).toEqual(integrations)
    await client.flush()
    expect(wire.messages().map((m) => m.context)).toEqual([sent.context, plain.context])
  })

  it('context.library is always the package’s, even when the caller sets one', () => {
    const client = createTestClient()
    const sent = client.track(trackInput(0, { context: { library: { name: 'x', version: '9' } } }))
    expect(sent.context.library).toEqual(LIBRARY)
  })

  it('without defaults, the message’s own context and integrations are used as they are', () => {
    const client = createTestClient()
    const sent = client.track(trackInput(0, { context: { a: { b: 1 } }, integrations: { All: false } }))
    expect(sent.context).toEqual({ a: { b: 1 }, library: LIBRARY })
    expect(sent.integrations).toEqual({ All: false })
    expect(client.track(trackInput(1))).not.toHaveProperty('integrations')
  })
})

describe('JSON edge cases on the wire', () => {
  it('a Date becomes its ISO string; undefined members are dropped', async () => {
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput(0, { properties: { at: new Date('2026-01-02T03:04:05.678Z'), gone: undefined, kept: null, list: [undefined, 1] } }))
    await client.flush()
    const [message] = wire.messages()
    expect(message.properties).toEqual({ at: '2026-01-02T03:04:05.678Z', kept: null, list: [null, 1] })
    expect(Object.keys(message.properties!)).toEqual(['at', 'kept', 'list'])
    expect(wire.requests[0].text).not.toContain('gone')
  })
})

describe('messageId where crypto.randomUUID is missing', () => {
  it('falls back to getRandomValues', () => {
    const real = globalThis.crypto
    const getRandomValues = vi.fn((array: Uint8Array) => real.getRandomValues(array))
    vi.stubGlobal('crypto', { getRandomValues })
    const client = createTestClient({ flushAt: 1000 })
    const ids = new Set(Array.from({ length: 200 }, (_, i) => client.track(trackInput(i)).messageId))
    expect(getRandomValues).toHaveBeenCalled()
    expect(ids.size).toBe(200)
    for (const id of ids) expect(id).toMatch(UUID_V4)
  })

  it('falls back when randomUUID throws (insecure context)', () => {
    const real = globalThis.crypto
    vi.stubGlobal('crypto', { randomUUID: () => { throw new Error('insecure') }, getRandomValues: (a: Uint8Array) => real.getRandomValues(a) })
    const client = createTestClient()
    expect(client.track(trackInput()).messageId).toMatch(UUID_V4)
  })

  it('works with no crypto at all', () => {
    vi.stubGlobal('crypto', undefined)
    const client = createTestClient({ flushAt: 1000 })
    const ids = new Set(Array.from({ length: 200 }, (_, i) => client.track(trackInput(i)).messageId))
    expect(ids.size).toBe(200)
    for (const id of ids) expect(id).toMatch(UUID_V4)
  })
})

describe('the JSON text buildMessage writes', () => {
  // Most messages have their stamped fields (type, context, messageId, timestamp) written after
  // the JSON of the caller's fields as text; the rest are serialised whole. Either way the text is
  // exactly JSON.stringify of the returned message, and `bytes` its UTF-8 length.
  const NO_DEFAULTS = { context: undefined, integrations: undefined }
  const built = (type: MessageType, input: Record<string, unknown>, defaults: MessageDefaults = NO_DEFAULTS) => {
    const b = buildMessage(type, input, defaults)
    expect(b.json).toBe(JSON.stringify(b.message))
    expect(b.bytes).toBe(new TextEncoder().encode(b.json).length)
    return b
  }

  it.each([
    ['a plain track', 'track', { userId: 'u', event: 'e', properties: { a: [1, { b: 'ü€😀' }], n: 1.5, s: 'quote " and \\ and \n' } }],
    ['a given timestamp (string and Date)', 'track', { userId: 'u', event: 'e', timestamp: '2020-01-02 03:04:05.6+02:00' }],
    ['a given Date', 'identify', { anonymousId: 'a', timestamp: new Date(0) }],
    ['a given messageId that needs escaping', 'track', { userId: 'u', event: 'e', messageId: 'a"b\\c' }],
    ['a context of its own', 'track', { userId: 'u', event: 'e', context: { ip: '1.2.3.4' } }],
    ['integrations of its own', 'track', { userId: 'u', event: 'e', integrations: { All: false } }],
    ['traits on identify', 'identify', { userId: 'u', traits: { plan: 'pro' } }],
    ['traits on page (sent as properties)', 'page', { userId: 'u', traits: { a: 1 } }],
    ['a `type` field of its own (overwritten, never written twice)', 'track', { userId: 'u', event: 'e', type: 'identify' }],
    ['a `type` field set to undefined', 'track', { type: undefined, userId: 'u', event: 'e' }],
    ['fields set to undefined', 'track', { userId: 'u', anonymousId: undefined, event: 'e', properties: undefined, context: undefined }],
  ] as Array<[string, MessageType, Record<string, unknown>]>)('%s', (_name, type, input) => {
    const { message } = built(type, input)
    expect(message.type).toBe(type)
  })

  it('with default context or integrations', () => {
    built('track', { userId: 'u', event: 'e' }, { context: { app: { name: 'A' } }, integrations: undefined })
    built('track', { userId: 'u', event: 'e' }, { context: undefined, integrations: { All: true } })
  })

  it('a message whose own toJSON decides its JSON is serialised as JSON.stringify would', () => {
    const input = { userId: 'u', event: 'e', toJSON: () => ({ replaced: true }) }
    expect(buildMessage('track', input, NO_DEFAULTS).json).toBe('{"replaced":true}')
  })

  it('identity fields inherited from a polluted Object.prototype still give valid JSON', () => {
    const proto = Object.prototype as Record<string, unknown>
    proto.userId = 'inherited'
    try {
      // Every field is inherited: the copy of the caller's own fields is `{}`.
      const { json } = built('identify', {})
      expect(JSON.parse(json)).toMatchObject({ type: 'identify', context: { library: LIBRARY } })
    } finally {
      delete proto.userId
    }
  })

  it('a bigint, a Map, a too-deep or a too-large message is handled on either path', () => {
    const big = buildMessage('track', { userId: 'u', event: 'e', properties: { n: 12345678901234567890n } }, NO_DEFAULTS)
    expect(big.json).toContain('"properties":{"n":12345678901234567890},"type":"track",')
    expect(big.bytes).toBe(big.json.length)
    expect(() => buildMessage('track', { userId: 'u', event: 'e', properties: { m: new Map() } }, NO_DEFAULTS)).toThrow(/properties\.m.*Map/)
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 100; i++) deep = { deep }
    expect(() => buildMessage('track', { userId: 'u', event: 'e', properties: deep }, NO_DEFAULTS)).toThrow(/`properties` nests objects and arrays too deep/)
    const input = { userId: 'u', event: 'e', properties: { s: '€'.repeat(10_700) } }
    const whole = { ...input, type: 'track', context: { library: LIBRARY }, messageId: 'x'.repeat(36), timestamp: 'x'.repeat(24) }
    expect(() => buildMessage('track', input, NO_DEFAULTS)).toThrow(expect.objectContaining({ name: 'MessageTooLargeError', size: new TextEncoder().encode(JSON.stringify(whole)).length, limit: 32_000 }))
  })
})
