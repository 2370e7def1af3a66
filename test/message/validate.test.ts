/**
 * `validateMessage`, as both builds run it: the server and worker platforms first ask a quick
 * yes-or-no (`passes`) and name the problem only when it says no; the browser platform's
 * `quickCheck` (a size budget) always says no, so valid messages go through `nameProblem` too.
 * Every case runs both ways with the same answer: the error's class, `code`, `field` and exact
 * message.
 */
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/errors.js'
import { describe as describeValue, isPlainObject, isValidTimestamp, kindOf, nameProblem, passes, validateMessage } from '../../src/message/validate.js'
import type { MessageType } from '../../src/message/types.js'

const BUILDS = ['server', 'browser'] as const

/** What `validateMessage` makes of `message` in `build`: `'ok'`, or the error's fields. */
function outcome(build: (typeof BUILDS)[number], type: MessageType, message: unknown) {
  try {
    if (build === 'browser') nameProblem(type, message)
    else validateMessage(type, message)
    return 'ok'
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    const { code, field, message: text } = error as ValidationError
    return { code, field, message: text }
  }
}

const refusal = (field: string, message: string) => ({ code: 'VALIDATION', field, message })

const ALL_OPTIONAL = {
  userId: 'u1', anonymousId: 'a1', name: 'Home', category: 'Docs', event: 'E', groupId: 'g1', previousId: 'p1', messageId: 'm1',
  traits: { plan: 'pro' }, properties: Object.create(null), context: { ip: '1.2.3.4' }, integrations: { All: true }, timestamp: new Date(0),
}

const VALID: Array<[MessageType, Record<string, unknown>]> = [
  ['identify', { userId: 'u1' }],
  ['identify', { anonymousId: 'a1' }],
  ['track', { event: 'Clicked', anonymousId: 'a1' }],
  ['page', { userId: 'u1', name: 'Home', category: 'Docs' }],
  ['screen', { anonymousId: 'a1', name: 'Main' }],
  ['group', { groupId: 'g1', userId: 'u1' }],
  ['alias', { userId: 'u1', previousId: 'p1' }],
  ...(['identify', 'track', 'page', 'screen', 'group', 'alias'] as const).map((type): [MessageType, Record<string, unknown>] => [type, ALL_OPTIONAL]),
  ['track', { event: 'E', userId: 'u1', timestamp: '2026-11-25' }],
  ['track', { event: 'E', userId: 'u1', timestamp: '2026-11-25T10:00:00.123+05:30' }],
  ['track', { event: 'E', userId: 'u1', timestamp: '2024-02-29T10:00:00Z' }],
  ['track', { event: 'E', userId: 'u1', context: runInNewContext('({ ip: "1.2.3.4" })') }],
]

const INVALID: Array<[MessageType, unknown, ReturnType<typeof refusal>]> = [
  ['track', null, refusal('message', 'Expected the track message to be an object, got `null`.')],
  ['identify', [], refusal('message', 'Expected the identify message to be an object, got an array.')],
  ['page', new Map(), refusal('message', 'Expected the page message to be an object, got a Map.')],
  ['track', { userId: 'u1' }, refusal('event', "You must pass 'event'.")],
  ['track', { userId: 'u1', event: '' }, refusal('event', "You must pass 'event'.")],
  ['track', { userId: 'u1', event: null }, refusal('event', "You must pass 'event'.")],
  ['track', { userId: 'u1', event: 42 }, refusal('event', "You must pass 'event'. Expected `event` to be a non-empty string, got `42`.")],
  ['group', { userId: 'u1' }, refusal('groupId', "You must pass a 'groupId'.")],
  ['group', { userId: 'u1', groupId: ['g'] }, refusal('groupId', "You must pass a 'groupId'. Expected `groupId` to be a non-empty string, got an array.")],
  ['alias', { previousId: 'p1' }, refusal('userId', "You must pass a 'userId'.")],
  ['alias', { userId: 'u1' }, refusal('previousId', "You must pass a 'previousId'.")],
  ['alias', { userId: 'u1', previousId: '' }, refusal('previousId', "You must pass a 'previousId'.")],
  ['identify', {}, refusal('userId', "You must pass either an 'anonymousId' or 'userId'.")],
  ['page', { userId: '', anonymousId: '' }, refusal('userId', "You must pass either an 'anonymousId' or 'userId'.")],
  ['track', { event: 'E', userId: 'u1', timestamp: '2026-11-25 10:00:00 GMT+0200' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"2026-11-25 10:00:00 GMT+0200"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: 'On 2026-11-25T10:00:00Z' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"On 2026-11-25T10:00:00Z"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: '2026-11-25T10:00:00Z!' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"2026-11-25T10:00:00Z!"`.')],
  // What Date.parse would read as another day or year: November 11th, the year 12026.
  ['track', { event: 'E', userId: 'u1', timestamp: 'Nov 2026-11-25' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"Nov 2026-11-25"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: '12026-11-25 10:00' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"12026-11-25 10:00"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: ' 2026-11-25 10:00' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `" 2026-11-25 10:00"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: '2026-02-29' }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"2026-02-29"`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: new Date(Number.NaN) }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `Invalid Date`.')],
  ['track', { event: 'E', userId: 'u1', timestamp: 1764064800000 }, refusal('timestamp', 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `1764064800000`.')],
  ['identify', { userId: 'u1', messageId: '' }, refusal('messageId', 'Expected `messageId` to be a non-empty string, got `""`.')],
]
// A wrong-typed optional string, each one (`event` beside a page, `groupId` beside a track, …).
for (const field of ['userId', 'anonymousId', 'name', 'category', 'event', 'groupId', 'previousId', 'messageId']) {
  const identity = field === 'userId' ? { anonymousId: 'a1' } : { userId: 'u1' }
  INVALID.push(['page', { ...identity, [field]: 42 }, refusal(field, `Expected \`${field}\` to be a string, got \`42\`.`)])
  INVALID.push(['identify', { ...identity, [field]: true }, refusal(field, `Expected \`${field}\` to be a string, got \`true\`.`)])
}
// A member that must be an object given as something else, each one.
for (const field of ['traits', 'properties', 'context', 'integrations']) {
  INVALID.push(['identify', { userId: 'u1', [field]: 'x' }, refusal(field, `Expected \`${field}\` to be an object, got \`"x"\`.`)])
  INVALID.push(['screen', { userId: 'u1', [field]: [] }, refusal(field, `Expected \`${field}\` to be an object, got an array.`)])
  INVALID.push(['track', { userId: 'u1', event: 'E', [field]: new Date(0) }, refusal(field, `Expected \`${field}\` to be an object, got \`${String(new Date(0))}\`.`)])
}

describe.each(BUILDS)('validateMessage in the %s build', (build) => {
  it.each(VALID)('accepts a valid %s (%j)', (type, message) => {
    expect(outcome(build, type, message)).toBe('ok')
  })

  it.each(INVALID)('refuses a %s %j naming the problem', (type, message, expected) => {
    expect(outcome(build, type, message)).toEqual(expected)
  })
})

describe('the quick check of the server build (`passes`)', () => {
  it('says yes to every valid message, so none takes the slower naming path', () => {
    for (const [type, message] of VALID) expect(passes(type, message), `${type} ${JSON.stringify(message)}`).toBe(true)
  })

  it('says no to every invalid message, so each gets its named error', () => {
    for (const [type, message] of INVALID) {
      if (isPlainObject(message)) expect(passes(type, message), `${type} ${JSON.stringify(message)}`).toBe(false)
    }
  })
})

describe('isValidTimestamp', () => {
  it('takes each month to its last day, February 29th in leap years only', () => {
    const last = { '01': 31, '02': 28, '03': 31, '04': 30, '05': 31, '06': 30, '07': 31, '08': 31, '09': 30, '10': 31, '11': 30, '12': 31 }
    for (const [month, days] of Object.entries(last)) {
      expect(isValidTimestamp(`2026-${month}-${days}`), `2026-${month}-${days}`).toBe(true)
      expect(isValidTimestamp(`2026-${month}-${days + 1}T00:00:00Z`), `2026-${month}-${days + 1}`).toBe(false)
    }
    for (const [year, leap] of [[2024, true], [2000, true], [2100, false], [1900, false], [2026, false]] as const) {
      expect(isValidTimestamp(`${year}-02-29`), String(year)).toBe(leap)
    }
  })

  it('refuses what is not a Date or a string', () => {
    for (const value of [undefined, null, 0, {}, ['2026-11-25']]) expect(isValidTimestamp(value)).toBe(false)
  })
})

describe('how a bad value is named (never what a secret holds)', () => {
  it.each([
    [undefined, '`undefined`', '`undefined`'],
    [null, '`null`', '`null`'],
    ['abc', '`"abc"`', 'a string'],
    ['x'.repeat(41), `\`"${'x'.repeat(40)}…"\``, 'a string'],
    ['x'.repeat(40), `\`"${'x'.repeat(40)}"\``, 'a string'],
    [42, '`42`', 'a number'],
    [7n, '`7`', 'a bigint'],
    [false, '`false`', 'a boolean'],
    [[1], 'an array', 'an array'],
    [{ a: 1 }, 'an object', 'an object'],
    [Object.create(null), 'an object', 'an object'],
    [new Map(), 'a Map', 'a Map'],
    [new Error('e'), 'an Error', 'an Error'],
    [Object.create({}), 'an Object', 'an Object'],
    [() => 1, 'a function', 'a function'],
    [Symbol('s'), 'a symbol', 'a symbol'],
  ])('%s: describe says %s, kindOf %s', (value, described, kind) => {
    expect(describeValue(value)).toBe(described)
    expect(kindOf(value)).toBe(kind)
  })

  it('an instance of a nameless class, or with no constructor at all, is an object', () => {
    for (const value of [new (class {})(), Object.create({ constructor: undefined })]) {
      expect(describeValue(value)).toBe('an object')
      expect(kindOf(value)).toBe('an object')
    }
  })

  it('a Date is shown as it is', () => {
    const date = new Date(0)
    expect(describeValue(date)).toBe(`\`${String(date)}\``)
    expect(kindOf(date)).toBe('a Date')
  })
})

describe('isPlainObject', () => {
  it('holds for plain objects of any realm, and for nothing else', () => {
    for (const value of [{}, Object.create(null), runInNewContext('({})'), runInNewContext('Object.create(null)')]) expect(isPlainObject(value)).toBe(true)
    for (const value of [null, undefined, 'x', 1, [], new Map(), new Date(0), Object.create({}), { [Symbol.toStringTag]: 'Tagged' }, () => 1]) {
      expect(isPlainObject(value), String(value)).toBe(false)
    }
  })
})
