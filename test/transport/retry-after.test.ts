import { describe, expect, it } from 'vitest'
import { parseRetryAfter } from '../../src/transport/retry-after.js'

const NOW = Date.parse('2026-11-22T10:00:00.000Z')
const CAP = 300_000

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    ['  7  ', 7000],
    ['0.5', 500],
    ['1.25', 1250],
    ['.5', 500],
    ['0.0001', 1],
  ])('delay-seconds %j → %i ms', (header, ms) => {
    expect(parseRetryAfter(header, CAP, NOW)).toBe(ms)
  })

  it('an HTTP date in the future → the time until then', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:00:30 GMT', CAP, NOW)).toBe(30_000)
    expect(parseRetryAfter(new Date(NOW + 90_000).toUTCString(), CAP, NOW)).toBe(90_000)
  })

  it('an HTTP date in the past → 0', () => {
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:59:00 GMT', CAP, NOW)).toBe(0)
    expect(parseRetryAfter('Thu, 01 Jan 1970 00:00:00 GMT', CAP, NOW)).toBe(0)
  })

  it.each([
    ['86400'],
    ['301'],
    ['1000000000000'],
    ['Mon, 22 Nov 2027 10:00:00 GMT'],
  ])('is capped: %j', (header) => {
    expect(parseRetryAfter(header, CAP, NOW)).toBe(CAP)
  })

  it('uses the given cap', () => {
    expect(parseRetryAfter('10', 5000, NOW)).toBe(5000)
  })

  it.each([[null], [undefined], [''], ['   '], ['soon'], ['-5'], ['1e3'], ['5s'], ['NaN'], ['Infinity'], ['1,5']])(
    'garbage %j → undefined',
    (header) => {
      expect(parseRetryAfter(header, CAP, NOW)).toBeUndefined()
    },
  )

  it('defaults now to the current time', () => {
    const delay = parseRetryAfter(new Date(Date.now() + 60_000).toUTCString(), CAP)!
    expect(delay).toBeGreaterThan(58_000)
    expect(delay).toBeLessThanOrEqual(60_000)
  })
})
