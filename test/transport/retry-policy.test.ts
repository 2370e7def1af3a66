import { describe, expect, it } from 'vitest'
import { AbortedError, AnalyticsError, ConfigError, HttpError, NetworkError, TimeoutError, TlsError } from '../../src/errors.js'
import { backoffDelay, classifyStatus, isRetryableError, retryDelay } from '../../src/transport/retry-policy.js'

describe('classifyStatus', () => {
  it.each([
    [200, 'success'], [201, 'success'], [202, 'success'], [204, 'success'], [299, 'success'],
    [408, 'retry'], [429, 'retry'], [500, 'retry'], [502, 'retry'], [503, 'retry'], [504, 'retry'], [599, 'retry'],
    [413, 'split'],
    [100, 'fail'], [101, 'fail'], [199, 'fail'],
    [300, 'fail'], [301, 'fail'], [302, 'fail'], [304, 'fail'], [307, 'fail'], [308, 'fail'],
    [400, 'fail'], [401, 'fail'], [403, 'fail'], [404, 'fail'], [405, 'fail'], [409, 'fail'], [410, 'fail'],
    [411, 'fail'], [412, 'fail'], [414, 'fail'], [415, 'fail'], [422, 'fail'], [428, 'fail'], [431, 'fail'], [499, 'fail'],
    [600, 'fail'], [0, 'fail'],
  ] as const)('%i → %s', (status, verdict) => {
    expect(classifyStatus(status)).toBe(verdict)
  })
})

describe('isRetryableError', () => {
  it.each([
    [new NetworkError('reset'), true],
    [new TimeoutError(1000), true],
    [new HttpError(503, 'x'), true],
    [new HttpError(429, 'x'), true],
    [new HttpError(408, 'x'), true],
    [new HttpError(400, 'x'), false],
    [new HttpError(413, 'x'), false],
    [new HttpError(302, 'x'), false],
    [new TlsError('self-signed'), false],
    [new AbortedError('closed'), false],
    [new ConfigError('x', 'x'), false],
    [new TypeError('bug'), false],
    ['a string', false],
    [undefined, false],
  ])('%s → %s', (error, retryable) => {
    expect(isRetryableError(error)).toBe(retryable)
  })

  it('recognises errors from another bundled copy by their code', () => {
    const foreign = Object.assign(new Error('reset'), { code: 'NETWORK', messages: [] })
    expect(foreign).not.toBeInstanceOf(AnalyticsError)
    expect(isRetryableError(foreign)).toBe(true)
    expect(isRetryableError(Object.assign(new Error('x'), { code: 'HTTP', status: 500, messages: [] }))).toBe(true)
  })

  it('retries by status only an HTTP error: another kind carrying the status behind it stays final', () => {
    expect(isRetryableError(new AnalyticsError('MESSAGE_TOO_LARGE', 'too large', { status: 503 }))).toBe(false)
    expect(isRetryableError(new AnalyticsError('VALIDATION', 'refused', { status: 429 }))).toBe(false)
    expect(isRetryableError(new AnalyticsError('HTTP', 'unavailable', { status: 503 }))).toBe(true)
  })
})

describe('backoffDelay (full jitter)', () => {
  const options = { baseMs: 100, capMs: 30_000 }

  it('is 0 with random 0, at every retry', () => {
    for (let retry = 1; retry <= 20; retry++) expect(backoffDelay(retry, options, 0)).toBe(0)
  })

  it('is just under base·2^(retry−1) with random 0.999, capped', () => {
    const expected = [99, 199, 399, 799, 1598, 3196, 6393, 12787, 25574, 29970, 29970]
    expect(expected.map((_, i) => backoffDelay(i + 1, options, 0.999))).toEqual(expected)
  })

  it('stays within [0, min(cap, base·2^(retry−1))) for any random in [0, 1)', () => {
    for (let retry = 1; retry <= 30; retry++) {
      const ceiling = Math.min(options.capMs, options.baseMs * 2 ** (retry - 1))
      for (const random of [0, 0.1, 0.5, 0.9, 0.999_999]) {
        const delay = backoffDelay(retry, options, random)
        expect(delay).toBeGreaterThanOrEqual(0)
        expect(delay).toBeLessThan(ceiling)
        expect(Number.isInteger(delay)).toBe(true)
      }
    }
  })

  it('does not overflow for huge retry counts', () => {
    expect(backoffDelay(10_000, options, 0.5)).toBe(15_000)
  })
})

describe('retryDelay', () => {
  const options = { baseMs: 100, capMs: 30_000 }

  it('is the jittered backoff without Retry-After', () => {
    expect(retryDelay(3, options, 0.5)).toBe(200)
  })

  it('is never less than Retry-After', () => {
    for (const random of [0, 0.5, 0.999]) {
      for (let retry = 1; retry <= 12; retry++) {
        expect(retryDelay(retry, options, random, 5000)).toBeGreaterThanOrEqual(5000)
      }
    }
    expect(retryDelay(1, options, 0, 5000)).toBe(5000)
    expect(retryDelay(12, options, 0.999, 1000)).toBe(29_970)
    expect(retryDelay(1, options, 0.5, 0)).toBe(50)
  })
})
