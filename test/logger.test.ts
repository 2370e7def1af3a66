import { afterEach, describe, expect, it, vi } from 'vitest'
import { count, createLogger, debugEnables } from '../src/logger.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('debugEnables (the conventions of the debug package)', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['analytics', true],
    ['analytics:*', true],
    ['analytics:client', true],
    ['analytics:client,analytics:collector', true],
    ['analytics:collector', false],
    ['*', true],
    ['a*', true],
    ['*client', true],
    ['an*ly*', true],
    ['foo,analytics', true],
    ['foo, analytics:*', true],
    ['foo analytics', true],
    [',,analytics,,', true],
    ['*,-analytics', false],
    ['*,-analytics:client', false],
    ['analytics:*,-analytics:client', false],
    ['-analytics,*', false],
    ['-analytics', false],
    ['-a*,analytics', false],
    ['*,-other', true],
    ['analytics:*,-analytics:collector', true],
    ['analyticsx', false],
    ['xanalytics', false],
    ['ANALYTICS', false],
    ['analytics:client:x', false],
    ['analytics?', false],
  ])('%j → %s for analytics:client', (setting, enabled) => {
    expect(debugEnables(setting, 'analytics:client')).toBe(enabled)
  })

  it('DEBUG=analytics and DEBUG=analytics:* enable every part; a comma list picks some', () => {
    for (const name of ['analytics:client', 'analytics:collector', 'analytics:webhooks', 'analytics:cli']) {
      expect(debugEnables('analytics', name)).toBe(true)
      expect(debugEnables('analytics:*', name)).toBe(true)
    }
    expect(debugEnables('analytics:webhooks,analytics:cli', 'analytics:cli')).toBe(true)
    expect(debugEnables('analytics:webhooks,analytics:cli', 'analytics:collector')).toBe(false)
  })

  it('matches other namespaces the same way', () => {
    expect(debugEnables('app:*', 'app:db')).toBe(true)
    expect(debugEnables('app:*,-app:db', 'app:db')).toBe(false)
  })
})

describe('createLogger', () => {
  it('is a no-op when disabled', () => {
    const sink = vi.fn()
    const log = createLogger('analytics:client', false, sink)
    expect(log.enabled).toBe(false)
    log('anything')
    expect(sink).not.toHaveBeenCalled()
  })

  it('writes "<namespace> <message> <details> +<ms>ms" lines', () => {
    vi.useFakeTimers({ now: 1_000_000 })
    const lines: string[] = []
    const log = createLogger('analytics:client', true, (line) => lines.push(line))
    expect(log.enabled).toBe(true)
    log('first')
    vi.advanceTimersByTime(42)
    const circular: Record<string, unknown> = {}
    circular.self = circular
    log('second', 'text', { a: 1 }, new TypeError('bad'), circular)
    expect(lines).toEqual([
      'analytics:client first +0ms',
      'analytics:client second text {"a":1} TypeError: bad [object Object] +42ms',
    ])
  })

  it('writes to console.error by default on servers', () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
    createLogger('analytics:collector', true)('hello')
    expect(spy).toHaveBeenCalledWith(expect.stringMatching(/^analytics:collector hello \+\d+ms$/))
  })

  it('writes to console.debug in a browser page (not red in DevTools)', () => {
    vi.stubGlobal('window', {})
    vi.stubGlobal('document', {})
    vi.stubGlobal('process', { ...process, versions: {} })
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      createLogger('analytics:client', true)('hello')
    } finally {
      vi.unstubAllGlobals()
    }
    expect(debug).toHaveBeenCalledWith(expect.stringMatching(/^analytics:client hello \+\d+ms$/))
    expect(error).not.toHaveBeenCalled()
  })
})

describe('count', () => {
  it('agrees with the number', () => {
    expect(count(1, 'message')).toBe('1 message')
    expect(count(0, 'message')).toBe('0 messages')
    expect(count(2, 'batch', 'batches')).toBe('2 batches')
    expect(count(1, 'batch', 'batches')).toBe('1 batch')
  })
})
