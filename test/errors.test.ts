/** One type guard per error class, matching on `code` (so a second bundled copy's errors match too). */
import { describe, expect, it } from 'vitest'
import * as pkg from '../src/index.js'

const instances = {
  isConfigError: new pkg.ConfigError('flushAt', 'x'),
  isValidationError: new pkg.ValidationError('event', 'x'),
  isMessageTooLargeError: new pkg.MessageTooLargeError(40_000, 32_000),
  isClientClosedError: new pkg.ClientClosedError('track'),
  isHttpError: new pkg.HttpError(500, 'x'),
  isNetworkError: new pkg.NetworkError('x'),
  isTimeoutError: new pkg.TimeoutError(10),
  isTlsError: new pkg.TlsError('x'),
  isQueueFullError: new pkg.QueueFullError(10),
  isAbortedError: new pkg.AbortedError('x'),
}

describe('type guards', () => {
  it.each(Object.keys(instances))('%s matches its own class only, and a copy of it from another bundle', (name) => {
    const guard = (pkg as unknown as Record<string, (e: unknown) => boolean>)[name]
    expect(typeof guard).toBe('function')
    for (const [other, error] of Object.entries(instances)) expect([other, guard(error)]).toEqual([other, other === name])
    const copy = Object.assign(new Error('from another copy'), { code: instances[name as keyof typeof instances].code, messages: [] })
    expect(guard(copy)).toBe(true)
    expect(pkg.isAnalyticsError(copy)).toBe(true)
  })
})
