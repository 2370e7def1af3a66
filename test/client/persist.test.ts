/**
 * `persist` outside a browser page: off by default; asked for where there is no localStorage or
 * Web Locks, it logs one line and the client works from memory. (The browser behaviour itself is
 * proved in real Chromium: test/runtimes/chromium-persist.test.ts.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { resolveOptions } from '../../src/client/options.js'
import { canPersist } from '../../src/platform/web.js'
import { collector, createTestClient, installServer, trackInput } from '../helpers/client.js'

installServer()

afterEach(() => {
  vi.restoreAllMocks()
})

describe('persist outside a browser page', () => {
  it('is off by default', () => {
    expect(canPersist()).toBe(false)
    expect(resolveOptions('key').persist).toBe(false)
  })

  it('asked for anyway: one logged line, and the client delivers from memory', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    const wire = collector()
    const client = createTestClient({ persist: true, flushAt: 5 })
    for (let i = 0; i < 12; i++) client.track(trackInput(i))
    expect(await client.close()).toEqual({ delivered: 12, failed: 0 })
    expect(wire.messages()).toHaveLength(12)
    expect(warn.mock.calls).toEqual([
      ['isomorphic-analytics: localStorage failed (Error: localStorage or Web Locks unavailable); messages are kept in memory only.'],
    ])
  })
})
