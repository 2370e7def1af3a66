import { describe, expect, it } from 'vitest'
import {
  AnalyticsError, ClientClosedError, MessageTooLargeError, ValidationError, isClientClosedError,
  isMessageTooLargeError, isValidationError, type Client,
} from '../../src/index.js'
import type { MessageType } from '../../src/message/types.js'
import { collector, createTestClient, installServer, trackInput } from '../helpers/client.js'

installServer()

const IDENTITY = "You must pass either an 'anonymousId' or 'userId'."

type Call = (client: Client, message: unknown) => unknown
const call = (type: MessageType): Call => (client, message) => (client[type] as (m: unknown) => unknown)(message)

/** The smallest valid input of each call. */
const VALID: Record<MessageType, Record<string, unknown>> = {
  identify: { userId: 'u1' },
  track: { event: 'Clicked', userId: 'u1' },
  page: { anonymousId: 'a1' },
  screen: { userId: 'u1' },
  group: { groupId: 'g1', userId: 'u1' },
  alias: { userId: 'u1', previousId: 'p1' },
}
const TYPES = Object.keys(VALID) as MessageType[]

function thrown(fn: () => unknown): unknown {
  try {
    fn()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

/** Asserts the call throws a ValidationError with this exact message and field, and enqueues nothing. */
function expectValidation(client: Client, type: MessageType, input: unknown, field: string, message?: string) {
  const before = client.stats()
  const error = thrown(() => call(type)(client, input)) as ValidationError
  expect(error).toBeInstanceOf(ValidationError)
  expect(error).toBeInstanceOf(AnalyticsError)
  expect(isValidationError(error)).toBe(true)
  expect(error.code).toBe('VALIDATION')
  expect(error.field).toBe(field)
  if (message !== undefined) expect(error.message).toBe(message)
  expect(client.stats()).toEqual(before)
  return error
}

describe('required fields: the Go v2 messages, in order', () => {
  const cases: Array<[MessageType, Record<string, unknown>, string, string]> = [
    ['identify', {}, 'userId', IDENTITY],
    ['identify', { traits: { a: 1 } }, 'userId', IDENTITY],
    ['track', {}, 'event', "You must pass 'event'."],
    ['track', { userId: 'u1' }, 'event', "You must pass 'event'."],
    ['track', { event: '' , userId: 'u1' }, 'event', "You must pass 'event'."],
    ['track', { event: null, userId: 'u1' }, 'event', "You must pass 'event'."],
    ['track', { event: 'E' }, 'userId', IDENTITY],
    ['track', { event: 'E', userId: '', anonymousId: '' }, 'userId', IDENTITY],
    ['page', {}, 'userId', IDENTITY],
    ['page', { name: 'Home' }, 'userId', IDENTITY],
    ['screen', {}, 'userId', IDENTITY],
    ['group', {}, 'groupId', "You must pass a 'groupId'."],
    ['group', { userId: 'u1' }, 'groupId', "You must pass a 'groupId'."],
    ['group', { groupId: 'g1' }, 'userId', IDENTITY],
    ['alias', {}, 'userId', "You must pass a 'userId'."],
    ['alias', { previousId: 'p1' }, 'userId', "You must pass a 'userId'."],
    ['alias', { userId: 'u1' }, 'previousId', "You must pass a 'previousId'."],
    ['alias', { userId: 'u1', previousId: '' }, 'previousId', "You must pass a 'previousId'."],
  ]
  it.each(cases)('%s(%j) → %s: %s', (type, input, field, message) => {
    const wire = collector()
    const client = createTestClient()
    expectValidation(client, type, input, field, message)
    return client.flush().then((result) => {
      expect(result).toEqual({ delivered: 0, failed: 0 })
      expect(wire.requests).toHaveLength(0)
    })
  })

  it('accepts either identity alone, or both', () => {
    const client = createTestClient()
    for (const type of ['identify', 'track', 'page', 'screen', 'group'] as const) {
      const base = type === 'track' ? { event: 'E' } : type === 'group' ? { groupId: 'g' } : {}
      expect(() => call(type)(client, { ...base, userId: 'u' })).not.toThrow()
      expect(() => call(type)(client, { ...base, anonymousId: 'a' })).not.toThrow()
      expect(() => call(type)(client, { ...base, userId: 'u', anonymousId: 'a' })).not.toThrow()
    }
    expect(client.stats().queued).toBe(15)
  })

  it('a mistyped required field names the rule and the value', () => {
    const client = createTestClient()
    const error = expectValidation(client, 'track', { event: 5, userId: 'u' }, 'event')
    expect(error.message.startsWith("You must pass 'event'.")).toBe(true)
    expect(error.message).toContain('5')
    expectValidation(client, 'group', { groupId: {}, userId: 'u' }, 'groupId')
    expectValidation(client, 'alias', { userId: 7, previousId: 'p' }, 'userId')
  })
})

describe('mistyped fields', () => {
  const cases: Array<[MessageType, string, unknown]> = []
  for (const type of TYPES) {
    cases.push([type, 'userId', 42])
    cases.push([type, 'anonymousId', true])
    cases.push([type, 'messageId', 123])
    cases.push([type, 'messageId', ''])
    cases.push([type, 'context', 'ctx'])
    cases.push([type, 'context', []])
    cases.push([type, 'integrations', 5])
    cases.push([type, 'timestamp', 'yesterday'])
    cases.push([type, 'timestamp', '2026-13-45T99:00:00Z'])
    cases.push([type, 'timestamp', new Date('not a date')])
    cases.push([type, 'timestamp', 1_700_000_000_000])
  }
  cases.push(['track', 'properties', []], ['track', 'properties', 'p'], ['page', 'properties', 1])
  cases.push(['identify', 'traits', 'x'], ['group', 'traits', []], ['page', 'traits', 'x'])
  cases.push(['page', 'name', 5], ['page', 'category', {}], ['screen', 'name', false])
  cases.push(['alias', 'previousId', 3])

  it.each(cases)('%s with %s = %j', (type, field, value) => {
    const client = createTestClient()
    expectValidation(client, type, { ...VALID[type], [field]: value }, field)
  })

  it.each([[null], [undefined], ['track me'], [[]], [42]])('a message that is not an object (%j)', (value) => {
    const client = createTestClient()
    expectValidation(client, 'track', value, 'message')
  })

  it('accepts valid timestamps: Date, ISO strings with Z, offsets, date only', () => {
    const client = createTestClient()
    for (const timestamp of [new Date(0), '2026-11-22T10:00:00.000Z', '2026-11-22T10:00:00+02:00', '2026-11-22T10:00:00Z', '2026-11-22']) {
      expect(() => client.track(trackInput(0, { timestamp }))).not.toThrow()
    }
  })
})

describe('messages that cannot be serialised', () => {
  it('a circular reference is a ValidationError naming the field, not a TypeError', () => {
    const client = createTestClient()
    const properties: Record<string, unknown> = { a: 1 }
    properties.self = properties
    const error = expectValidation(client, 'track', trackInput(0, { properties }), 'properties')
    expect(error).not.toBeInstanceOf(TypeError)
    expect(error.cause).toBeInstanceOf(TypeError)

    const context: Record<string, unknown> = {}
    context.loop = { back: context }
    expectValidation(client, 'identify', { userId: 'u', context }, 'context')
  })

  it('a Map or Set is a ValidationError naming the field (JSON would send `{}`)', () => {
    const client = createTestClient()
    const map = expectValidation(client, 'track', trackInput(0, { properties: { plan: new Map([['a', 1]]) } as never }), 'properties.plan')
    expect(map.message).toBe('Cannot send `properties.plan`: it is a Map, which JSON would turn into `{}`. Pass Object.fromEntries(map) instead.')
    const set = expectValidation(client, 'identify', { userId: 'u', traits: { tags: [1, new Set(['x'])] } as never }, 'traits.tags[1]')
    expect(set.message).toBe('Cannot send `traits.tags[1]`: it is a Set, which JSON would turn into `{}`. Pass [...set] instead.')
    expect(client.stats().queued).toBe(0)
  })

  it('a bigint property is sent as its digits, a JSON number of any size', async () => {
    const recorder = collector()
    const client = createTestClient()
    client.track(trackInput(0, { properties: { n: 10n, big: 123456789012345678901234567890n, list: [-1n], text: '10n' } }))
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(recorder.requests[0].text).toContain('"properties":{"n":10,"big":123456789012345678901234567890,"list":[-1],"text":"10n"}')
  })
})

describe('MessageTooLargeError over 32,000 UTF-8 bytes', () => {
  /** The exact serialised size of the message `track` would send with this padding. */
  function sizeWith(client: Client, pad: string): number {
    const sent = client.track(trackInput(0, { messageId: 'm', timestamp: '2026-11-22T10:00:00.000Z', properties: { pad } }))
    return Buffer.byteLength(JSON.stringify(sent))
  }

  it('accepts exactly 32,000 bytes and refuses 32,001', () => {
    const client = createTestClient()
    const base = sizeWith(client, '')
    const input = (n: number) => trackInput(0, { messageId: 'm', timestamp: '2026-11-22T10:00:00.000Z', properties: { pad: 'x'.repeat(n) } })
    const atLimit = client.track(input(32_000 - base))
    expect(Buffer.byteLength(JSON.stringify(atLimit))).toBe(32_000)
    const before = client.stats()
    const error = thrown(() => client.track(input(32_001 - base))) as MessageTooLargeError
    expect(error).toBeInstanceOf(MessageTooLargeError)
    expect(isMessageTooLargeError(error)).toBe(true)
    expect(error.code).toBe('MESSAGE_TOO_LARGE')
    expect(error.size).toBe(32_001)
    expect(error.limit).toBe(32_000)
    expect(client.stats()).toEqual(before)
  })

  it('counts UTF-8 bytes, not UTF-16 units', () => {
    const wire = collector()
    const client = createTestClient()
    // 11,000 × '€' is 11,000 JS characters but 33,000 UTF-8 bytes.
    const euro = trackInput(0, { properties: { text: '€'.repeat(11_000) } })
    expect(JSON.stringify(euro).length).toBeLessThan(32_000)
    const error = thrown(() => client.track(euro)) as MessageTooLargeError
    expect(error).toBeInstanceOf(MessageTooLargeError)
    expect(error.size).toBeGreaterThan(33_000)
    // Emoji: 2 UTF-16 units, 4 bytes each; 8,100 of them are 16,200 units but 32,400 bytes.
    expect(() => client.track(trackInput(0, { properties: { text: '😀'.repeat(8_100) } }))).toThrow(MessageTooLargeError)
    // The same number of ASCII characters is fine.
    client.track(trackInput(1, { properties: { text: 'e'.repeat(11_000) } }))
    expect(client.stats().queued).toBe(1)
    return client.flush().then(() => {
      expect(wire.messages().map((m) => m.userId)).toEqual(['user-1'])
    })
  })
})

describe('after close()', () => {
  it.each(TYPES)('%s throws ClientClosedError', async (type) => {
    collector()
    const client = createTestClient()
    await client.close()
    const error = thrown(() => call(type)(client, VALID[type]))
    expect(error).toBeInstanceOf(ClientClosedError)
    expect(error).toBeInstanceOf(AnalyticsError)
    expect(isClientClosedError(error)).toBe(true)
    expect((error as ClientClosedError).message).toContain(type)
  })

  it('throws synchronously as soon as close() is called, before it settles', () => {
    const client = createTestClient()
    void client.close()
    expect(() => client.track(trackInput())).toThrow(ClientClosedError)
  })
})

describe('each call is synchronous and returns the message, not a promise', () => {
  it.each(TYPES)('%s', (type) => {
    const client = createTestClient()
    const result = call(type)(client, VALID[type]) as Record<string, unknown>
    expect(result).not.toBeInstanceOf(Promise)
    expect(typeof (result as { then?: unknown }).then).toBe('undefined')
    expect(result.type).toBe(type)
    expect(client.stats().queued).toBe(1)
  })
})
