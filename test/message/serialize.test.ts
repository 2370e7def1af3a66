import { describe, expect, it } from 'vitest'
import { MessageTooLargeError, ValidationError } from '../../src/errors.js'
import { serializeMessage } from '../../src/message/serialize.js'
import { isValidTimestamp, validateMessage } from '../../src/message/validate.js'

describe('serializeMessage', () => {
  it('returns the JSON and its exact UTF-8 length', () => {
    const message = { a: 'é😀', b: [1, 2], c: undefined, d: new Date(0) }
    const { json, bytes } = serializeMessage(message)
    expect(json).toBe('{"a":"é😀","b":[1,2],"d":"1970-01-01T00:00:00.000Z"}')
    expect(bytes).toBe(Buffer.byteLength(json))
  })

  it('throws MessageTooLargeError over the limit, by bytes', () => {
    expect(() => serializeMessage({ t: '€'.repeat(10) }, 32)).toThrow(MessageTooLargeError)
    expect(serializeMessage({ t: 'e'.repeat(10) }, 32).bytes).toBe(18)
  })

  it('turns a circular reference into a ValidationError naming the top-level field', () => {
    const loop: Record<string, unknown> = {}
    loop.loop = loop
    const error = (() => {
      try {
        serializeMessage({ ok: 1, properties: { deep: loop } })
      } catch (e) {
        return e as ValidationError
      }
    })()!
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.field).toBe('properties')
    expect(error.message).toContain('properties')
  })

  it('writes a bigint as its digits: a JSON number of any size, never a string', () => {
    const { json, bytes } = serializeMessage({ traits: { n: 1n, big: -123456789012345678901234567890n, list: [0n], s: '1n' } })
    expect(json).toBe('{"traits":{"n":1,"big":-123456789012345678901234567890,"list":[0],"s":"1n"}}')
    expect(bytes).toBe(json.length)
  })

  it('refuses a Map or a Set from another realm (a vm context) too', async () => {
    const { runInNewContext } = await import('node:vm')
    const [map, set] = runInNewContext('[new Map([[1, 2]]), new Set([1])]') as [unknown, unknown]
    expect(() => serializeMessage({ properties: { m: map } })).toThrow(/`properties.m`: it is a Map/)
    expect(() => serializeMessage({ properties: { s: set } })).toThrow(/`properties.s`: it is a Set/)
  })

  it('refuses a Map or a Set, naming the field', () => {
    expect(() => serializeMessage({ properties: { m: new Map() } })).toThrow(
      new ValidationError('properties.m', 'Cannot send `properties.m`: it is a Map, which JSON would turn into `{}`. Pass Object.fromEntries(map) instead.'),
    )
    expect(() => serializeMessage({ properties: { a: [{ s: new Set([1]) }] } })).toThrowError(/`properties\.a\[0\]\.s`: it is a Set/)
    expect(serializeMessage({ properties: { empty: {}, text: '{}' } }).json).toBe('{"properties":{"empty":{},"text":"{}"}}')
  })

  it('a circular reference next to a bigint still names its field', () => {
    const loop: Record<string, unknown> = { n: 1n }
    loop.self = loop
    expect(() => serializeMessage({ properties: loop })).toThrowError(/Cannot serialise `properties` to JSON/)
  })

  it('a throwing toJSON is a ValidationError too', () => {
    const bad = { toJSON: () => { throw new Error('nope') } }
    expect(() => serializeMessage({ context: bad })).toThrow(ValidationError)
  })
})

describe('isValidTimestamp', () => {
  it.each([
    [new Date(0), true],
    [new Date(Number.NaN), false],
    ['2026-11-22T10:00:00.000Z', true],
    ['2026-11-22T10:00:00Z', true],
    ['2026-11-22T10:00:00.123456Z', true],
    ['2026-11-22T10:00:00+05:30', true],
    ['2026-11-22', true],
    ['2026-02-30T00:00:00Z', false], // Date.parse would roll it over to March 2nd
    ['2024-02-29T00:00:00Z', true],
    ['2023-02-29', false],
    ['2000-02-29T00:00:00Z', true], // divisible by 400
    ['1900-02-29T00:00:00Z', false], // by 100, not by 400
    ['2026-04-31', false],
    ['2026-12-31T23:59:59Z', true],
    ['2026-13-01T00:00:00Z', false],
    ['22/11/2026', false],
    ['Sun, 22 Nov 2026 10:00:00 GMT', false],
    ['now', false],
    ['', false],
    [1_700_000_000_000, false],
    [null, false],
  ])('%j → %s', (value, valid) => {
    expect(isValidTimestamp(value)).toBe(valid)
  })
})

describe('validateMessage', () => {
  it('reports the first problem: required fields before identity before types', () => {
    expect(() => validateMessage('track', { userId: 5 })).toThrow("You must pass 'event'.")
    expect(() => validateMessage('track', { event: 'e', userId: 5 })).toThrow('`userId`')
    expect(() => validateMessage('track', { event: 'e', properties: 'x' })).toThrow("You must pass either an 'anonymousId' or 'userId'.")
  })

  it('accepts a null-prototype object', () => {
    const message = Object.assign(Object.create(null), { userId: 'u' })
    expect(() => validateMessage('identify', message)).not.toThrow()
  })

  it('refuses class instances as properties', () => {
    class Props {
      a = 1
    }
    expect(() => validateMessage('track', { event: 'e', userId: 'u', properties: new Props() })).toThrow(ValidationError)
  })
})
