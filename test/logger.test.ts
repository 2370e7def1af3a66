import { afterEach, describe, expect, it, vi } from 'vitest'
import { createLogger, debugEnables, LOG_NAMESPACE } from '../src/logger.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('debugEnables (the conventions of the debug package)', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['analytics', true],
    ['*', true],
    ['a*', true],
    ['*tics', true],
    ['an*ly*', true],
    ['foo,analytics', true],
    ['foo, analytics', true],
    ['foo analytics', true],
    [',,analytics,,', true],
    ['*,-analytics', false],
    ['-analytics,*', false],
    ['-analytics', false],
    ['-a*,analytics', false],
    ['*,-other', true],
    ['analytics:*', false],
    ['analyticsx', false],
    ['xanalytics', false],
    ['ANALYTICS', false],
    ['analytic.', false],
    ['analytics?', false],
  ])('%j → %s', (setting, enabled) => {
    expect(debugEnables(setting, LOG_NAMESPACE)).toBe(enabled)
  })

  it('matches other namespaces the same way', () => {
    expect(debugEnables('app:*', 'app:db')).toBe(true)
    expect(debugEnables('app:*,-app:db', 'app:db')).toBe(false)
  })
})

describe('createLogger', () => {
  it('is a no-op when disabled', () => {
    const sink = vi.fn()
    const log = createLogger(false, sink)
    expect(log.enabled).toBe(false)
    log('anything')
    expect(sink).not.toHaveBeenCalled()
  })

  it('writes "analytics <message> <details> +<ms>ms" lines', () => {
    vi.useFakeTimers({ now: 1_000_000 })
    const lines: string[] = []
    const log = createLogger(true, (line) => lines.push(line))
    expect(log.enabled).toBe(true)
    log('first')
    vi.advanceTimersByTime(42)
    const circular: Record<string, unknown> = {}
    circular.self = circular
    log('second', 'text', { a: 1 }, new TypeError('bad'), circular)
    expect(lines).toEqual([
      'analytics first +0ms',
      'analytics second text {"a":1} TypeError: bad [object Object] +42ms',
    ])
  })

  it('writes to console.error by default', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    createLogger(true)('hello')
    expect(spy).toHaveBeenCalledWith(expect.stringMatching(/^analytics hello \+\d+ms$/))
  })
})
