/**
 * From a request body to the messages the collector accepts (`parseJson`, `extractMessages`):
 * what a sender relies on (the write key never forwarded, `null` read as absent, numeric ids as
 * their digits, server times on every message) and the 400 that names each problem.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { extractMessages, parseJson, tooDeepBeside, withinMessageLimits, type BodyKind } from '../../../src/collector/ingest/parse.js'
import { loadExactJson } from '../../../src/message/exact-json.js'
import { forwardingCollector, KEY, post, track, until } from '../helpers.js'

const RECEIVED = '2026-11-25T10:00:00.000Z'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The messages of a body as the collector reads it, or the 400 it answers (thrown). */
function read(kind: BodyKind, text: string) {
  const { value, hasBigInt } = parseJson(text)
  return extractMessages(kind, value, RECEIVED, hasBigInt, withinMessageLimits(text, hasBigInt))
}

const batchOf = (...messages: unknown[]) => JSON.stringify({ batch: messages })

/** The 400 `fn` throws, as the collector would answer it. */
function problem(fn: () => unknown) {
  try {
    fn()
  } catch (error) {
    const { status, code, field, message } = error as { status: number; code: string; field?: string; message: string }
    return { status, code, field, message }
  }
  throw new Error('expected a 400, got none')
}

beforeAll(() => loadExactJson())

describe('the write key', () => {
  it('is never on an accepted message, in a batch or a single call', () => {
    const [inBatch] = read('batch', batchOf(track({ writeKey: KEY })))
    expect(inBatch).not.toHaveProperty('writeKey')
    expect(inBatch).toMatchObject({ event: 'Signed Up', userId: 'u1' })
    const [single] = read('track', JSON.stringify({ event: 'Clicked', userId: 'u1', writeKey: KEY }))
    expect(single).not.toHaveProperty('writeKey')
  })

  it('is not forwarded to the webhook receiver', async () => {
    const { collector, calls } = forwardingCollector()
    expect((await collector.fetch(post({ batch: [track({ writeKey: 'wk_live_4242' })] }))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).not.toContain('wk_live_4242')
    await collector.close()
  })
})

describe('a single call (/v1/<type>)', () => {
  it('gets the type of its path, the time it was received, the default timestamp and a messageId', () => {
    const [message] = read('identify', JSON.stringify({ userId: 'u1', traits: { plan: 'pro' } }))
    expect(message).toEqual({ type: 'identify', userId: 'u1', traits: { plan: 'pro' }, timestamp: RECEIVED, receivedAt: RECEIVED, messageId: expect.stringMatching(UUID) })
    expect(message).not.toHaveProperty('sentAt')
  })

  it('keeps its own timestamp, messageId and sentAt', () => {
    const own = { type: 'track', event: 'E', userId: 'u1', timestamp: '2026-11-24T09:00:00Z', messageId: 'm-7', sentAt: '2026-11-24T09:00:01Z' }
    expect(read('track', JSON.stringify(own))).toEqual([{ ...own, receivedAt: RECEIVED }])
  })

  it('whose body names another type is refused with 400 naming `type`', () => {
    expect(problem(() => read('track', JSON.stringify({ type: 'identify', userId: 'u1', event: 'E' })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'type', message: 'Expected `type` to be "track" on /v1/track, got `"identify"`.',
    })
  })

  it('whose body is not an object is refused with 400 naming the body', () => {
    expect(problem(() => read('page', '[1]'))).toEqual({
      status: 400, code: 'VALIDATION', field: 'body', message: 'Expected the request body to be a JSON object (the page message), got an array.',
    })
  })

  it('that fails validation is refused naming the field alone (no `batch[i].`)', () => {
    expect(problem(() => read('track', JSON.stringify({ userId: 'u1' })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'event', message: "You must pass 'event'.",
    })
  })
})

describe('members sent as null (Python and Ruby libraries)', () => {
  const ABSENT = ['userId', 'anonymousId', 'name', 'category', 'event', 'groupId', 'previousId', 'traits', 'properties', 'context', 'integrations', 'originalTimestamp', 'sentAt']

  it.each(ABSENT)('`%s: null` is read as absent', (member) => {
    const identity = member === 'anonymousId' ? { userId: 'u1' } : { anonymousId: 'a1' }
    const [message] = read('batch', batchOf({ type: 'identify', ...identity, [member]: null }))
    expect(message).not.toHaveProperty(member)
    expect(message.timestamp).toBe(RECEIVED)
  })

  it('`messageId: null` gets a new one, `timestamp: null` the time received', () => {
    const [message] = read('batch', batchOf({ type: 'identify', userId: 'u1', messageId: null, timestamp: null }))
    expect(message.messageId).toMatch(UUID)
    expect(message.timestamp).toBe(RECEIVED)
  })

  it("a required member sent as null is missing, and named so (`event` of a track)", () => {
    expect(problem(() => read('batch', batchOf({ type: 'track', userId: 'u1', event: null })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'batch[0].event', message: "You must pass 'event'.",
    })
  })

  it('other members keep their null', () => {
    const [message] = read('batch', batchOf({ type: 'identify', userId: 'u1', version: null }))
    expect(message).toHaveProperty('version', null)
  })
})

describe('PHP\'s empty arrays for objects', () => {
  it.each(['traits', 'properties', 'context', 'integrations'])('`%s: []` is read as `{}`', (member) => {
    const [message] = read('batch', batchOf({ type: 'identify', userId: 'u1', [member]: [] }))
    expect(message[member]).toEqual({})
  })

  it('an empty array elsewhere stays an array (and a string member that is one is refused)', () => {
    expect(problem(() => read('batch', batchOf({ type: 'identify', userId: [] })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'batch[0].userId', message: 'Expected `userId` to be a string, got an array.',
    })
    const [message] = read('batch', batchOf({ type: 'identify', userId: 'u1', tags: [] }))
    expect(message.tags).toEqual([])
  })

  it('an envelope `context: []` or `null` is no envelope context', () => {
    for (const context of [[], null]) {
      const [message] = read('batch', JSON.stringify({ batch: [track()], context }))
      expect(message).not.toHaveProperty('context')
    }
  })
})

describe('numeric ids (Ruby\'s `user_id: 42`)', () => {
  it.each(['userId', 'anonymousId', 'groupId', 'previousId'])('`%s` is read as its decimal text, digits kept beyond 2^53', (member) => {
    const base = { type: member === 'groupId' ? 'group' : member === 'previousId' ? 'alias' : 'identify', userId: 'u1', groupId: 'g1', previousId: 'p1' }
    const [small] = read('batch', batchOf({ ...base, [member]: 42 }))
    expect(small[member]).toBe('42')
    const [long] = read('batch', batchOf({ ...base, [member]: 1 }).replace(`"${member}":1`, `"${member}":9007199254740993`))
    expect(long[member]).toBe('9007199254740993')
  })

  it('`1e999` as an id is refused, not read as "Infinity"', () => {
    expect(problem(() => read('batch', '{"batch":[{"type":"identify","userId":1e999}]}'))).toEqual({
      status: 400, code: 'VALIDATION', field: 'batch[0].userId', message: 'Expected `userId` to be a string, got `Infinity`.',
    })
    expect(problem(() => read('batch', '{"batch":[{"type":"identify","anonymousId":-1e999}]}'))).toMatchObject({
      field: 'batch[0].anonymousId', message: 'Expected `anonymousId` to be a string, got `-Infinity`.',
    })
  })

  it('other members given as numbers stay numbers, and a string member so is refused', () => {
    expect(problem(() => read('batch', batchOf({ type: 'track', userId: 'u1', event: 'E', messageId: 42 })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'batch[0].messageId', message: 'Expected `messageId` to be a string, got `42`.',
    })
  })
})

describe('the batch envelope', () => {
  it("copies the batch's sentAt onto each message without its own", () => {
    const [plain, own] = read('batch', JSON.stringify({ batch: [track(), track({ sentAt: '2026-11-22T10:00:05Z' })], sentAt: '2026-11-22T10:00:09Z' }))
    expect(plain.sentAt).toBe('2026-11-22T10:00:09Z')
    expect(own.sentAt).toBe('2026-11-22T10:00:05Z')
  })

  it('without a sentAt, gives its messages none', () => {
    for (const body of [{ batch: [track()] }, { batch: [track()], sentAt: null }]) {
      const [message] = read('batch', JSON.stringify(body))
      expect('sentAt' in message).toBe(false)
      expect(message.receivedAt).toBe(RECEIVED)
    }
  })

  it("merges its context and integrations under each message's own", () => {
    const body = { batch: [track({ integrations: { Mixpanel: false } }), track()], context: { library: { name: 'analytics-go' } }, integrations: { All: true, Mixpanel: true } }
    const [own, plain] = read('batch', JSON.stringify(body))
    expect(own.integrations).toEqual({ All: true, Mixpanel: false })
    expect(plain.integrations).toEqual({ All: true, Mixpanel: true })
    expect(plain.context).toEqual({ library: { name: 'analytics-go' } })
  })

  it('refuses a context or integrations that is not an object, naming it', () => {
    expect(problem(() => read('batch', JSON.stringify({ batch: [track()], integrations: 'all' })))).toEqual({
      status: 400, code: 'VALIDATION', field: 'integrations', message: 'Expected `integrations` to be an object, got `"all"`.',
    })
  })

  it.each([
    ['a body that is not an object', '"batch"', 'body', 'Expected the request body to be a JSON object { batch: [...] }, got `"batch"`.'],
    ['a batch that is not an array', '{"batch":{"type":"track"}}', 'batch', 'Expected `batch` to be an array of messages, got an object.'],
    ['no batch', '{}', 'batch', 'Expected `batch` to be an array of messages, got `undefined`.'],
    ['an entry that is not an object', '{"batch":[{"type":"identify","userId":"u1"},7]}', 'batch[1]', 'Expected `batch[1]` to be a message object, got `7`.'],
    ['an entry of no known type', '{"batch":[{"type":"Track","userId":"u1"}]}', 'batch[0].type', 'Expected `batch[0].type` to be one of identify, track, page, screen, group, alias, got `"Track"`.'],
  ])('refuses %s with 400 naming it', (_name, text, field, message) => {
    expect(problem(() => read('batch', text))).toEqual({ status: 400, code: 'VALIDATION', field, message })
  })

  it('accepts no messages from an empty batch', () => {
    expect(read('batch', '{"batch":[]}')).toEqual([])
  })
})

describe('the size limit', () => {
  it('refuses a message over 32 KiB with 400 naming it, counted on its exact JSON when it holds a long integer', () => {
    const big = track({ properties: { pad: 'x'.repeat(33_000) } })
    expect(problem(() => read('batch', batchOf(track(), big)))).toMatchObject({ status: 400, code: 'MESSAGE_TOO_LARGE', field: 'batch[1]' })
    expect(problem(() => read('track', JSON.stringify(big)))).toMatchObject({ status: 400, code: 'MESSAGE_TOO_LARGE', field: 'message' })
    // A single call's body need not be checked when even 3 bytes per character cannot reach the
    // limit; this one (10,944 characters) can, once its type is added: 32,797 bytes.
    const body = `{"userId":"u","event":"${'中'.repeat(10_919)}"}`
    expect(body.length).toBe(10_944)
    expect(problem(() => read('track', body))).toMatchObject({ status: 400, code: 'MESSAGE_TOO_LARGE', field: 'message' })
    // Integers beyond 2^53 (read as bigints) are measured on the message's exact JSON.
    const digits = JSON.stringify(track({ properties: { pad: 'x'.repeat(14_000), ids: Array(1_000).fill(1) } })).replace(/\b1\b(?=[,\]])/g, '9223372036854775807')
    expect(problem(() => read('batch', `{"batch":[${digits}]}`))).toMatchObject({ code: 'MESSAGE_TOO_LARGE', field: 'batch[0]' })
  })
})

describe('parseJson', () => {
  it.each(['', '  \n'])('refuses an empty body (%j) with 400 INVALID_JSON naming the body', (text) => {
    expect(problem(() => parseJson(text))).toEqual({ status: 400, code: 'INVALID_JSON', field: 'body', message: 'Request body is empty; expected JSON.' })
  })

  it('refuses text that is not JSON, without quoting it (a write key may be in it)', () => {
    const refused = problem(() => parseJson('{"writeKey":"wk_live_4242",'))
    expect(refused).toMatchObject({ status: 400, code: 'INVALID_JSON', field: 'body', message: expect.stringMatching(/^Request body is not valid JSON: .+\.$/) })
    expect(refused.message).not.toContain('wk_live_4242')
    expect(problem(() => parseJson('{"a":NaN,'))).toMatchObject({ code: 'INVALID_JSON' })
  })

  it("reads Python's NaN and Infinity as null", () => {
    expect(parseJson('{"a":NaN,"b":-Infinity,"c":"NaN"}').value).toEqual({ a: null, b: null, c: 'NaN' })
  })
})

it('tooDeepBeside names the body and the depth', () => {
  expect(problem(() => {
    throw tooDeepBeside()
  })).toEqual({
    status: 400, code: 'VALIDATION', field: 'body',
    message: 'Request body nests objects and arrays more than 102 levels deep beside its messages, so the integers beyond 2^53 in it cannot be read exactly. Send no member that nests that deep.',
  })
})
