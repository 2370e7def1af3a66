import { beforeAll, describe, expect, it } from 'vitest'
import { loadExactJson, mayHoldLongInteger, parseExact, stringifyExact } from '../../src/message/exact-json.js'

describe('exact JSON', () => {
  beforeAll(loadExactJson)

  // The plain regex of what it looks for: 16 digits where a number may start.
  const CANDIDATE = /(?:^|[:,[])\s*-?\d{16}/

  it('finds a run of 16 digits where a number may start, wherever it sits, and only then', () => {
    // Every length and offset around the probing stride, after each kind of prefix.
    for (const prefix of [':', ', ', '[-', '"', 'a', ': -']) {
      for (let offset = 0; offset < 40; offset++) {
        for (let length = 12; length < 20; length++) {
          const text = 'x'.repeat(offset) + prefix + '7'.repeat(length) + 'y'.repeat(offset % 5)
          expect(mayHoldLongInteger(text), `${JSON.stringify(prefix)} ${offset}/${length}`).toBe(CANDIDATE.test(text))
        }
      }
    }
    let seed = 7
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647
    const chars = ':,[ -"x'
    for (let n = 0; n < 500; n++) {
      const text = Array.from({ length: 200 }, () => (random() < 0.85 ? String(Math.floor(random() * 10)) : chars[Math.floor(random() * chars.length)])).join('')
      expect(mayHoldLongInteger(text), text).toBe(CANDIDATE.test(text))
    }
    expect(mayHoldLongInteger('{"id_str":"1234567890123456789","n":1}')).toBe(false)
  })

  it('reads integers beyond 2^53 as bigint and writes them back digit for digit', () => {
    const text = '{"a":9223372036854775807,"b":-9223372036854775808,"c":9007199254740991,"d":19.99,"e":"12345678901234567890","f":[12345678901234567890]}'
    const { value, hasBigInt } = parseExact(text)
    expect(hasBigInt).toBe(true)
    expect(value).toEqual({ a: 9223372036854775807n, b: -9223372036854775808n, c: 9007199254740991, d: 19.99, e: '12345678901234567890', f: [12345678901234567890n] })
    expect(stringifyExact(value, true)).toBe(text)
  })

  it('reads like JSON.parse otherwise: last duplicate key wins, __proto__ stays a plain key, long decimals are floats', () => {
    const { value, hasBigInt } = parseExact('{"a":1,"a":2,"__proto__":{"x":1},"pi":3.14159265358979323846,"e":1e400}')
    expect(hasBigInt).toBe(false)
    expect(value).toEqual(JSON.parse('{"a":2,"__proto__":{"x":1},"pi":3.141592653589793,"e":1e400}'))
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
  })

  it('throws a SyntaxError for invalid JSON on either path', () => {
    expect(() => parseExact('{"a":')).toThrow(SyntaxError)
    expect(() => parseExact('{"a":12345678901234567890,}')).toThrow(SyntaxError)
  })
})
