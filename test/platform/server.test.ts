import { afterEach, describe, expect, it, vi } from 'vitest'
/** The server platform (Node, Bun, Deno), as the Node build has it (`#platform`). */
import {
  isBrowserLike, onPageHide, randomUUID, readDebugSetting, setBackgroundTimeout, utf8ByteLength,
} from '../../src/platform/server.js'
import { onProcessIdleExit } from '../../src/platform/server-runtime.js'
import { isBrowserPage } from '../../src/platform/web.js'
import { sleep } from '../../src/transport/sleep.js'
import { defaultFetch } from '../../src/platform/transport.js'
import { utf8Length } from '../../src/limits.js'

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
  vi.unstubAllEnvs()
})

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** `randomUUID` of a fresh copy of the module, loaded with the globals as they are now stubbed. */
async function freshRandomUUID(): Promise<() => string> {
  vi.resetModules()
  return (await import('../../src/platform/server.js')).randomUUID
}

describe('randomUUID', () => {
  // Where `Buffer` exists (Node, Bun), from a pool of crypto.getRandomValues bytes (4,096: 256
  // UUIDs a fill), each written as one flat string (../../src/platform/server-runtime.ts).
  it('draws from a pool of random bytes where Buffer exists: distinct v4 UUIDs across refills', () => {
    const ids = new Set(Array.from({ length: 1_000 }, () => randomUUID()))
    expect(ids.size).toBe(1_000)
    for (const id of ids) expect(id).toMatch(UUID_V4)
  })

  it("sets the version and variant bits of the pool's UUIDs, whatever the random bytes", () => {
    for (const fill of [0x00, 0xff, 0x5a]) {
      vi.stubGlobal('crypto', { getRandomValues: (a: Uint8Array) => a.fill(fill) })
      // Within 256 calls the pool is filled again, from the stub.
      const ids = Array.from({ length: 300 }, () => randomUUID())
      for (const id of ids) expect(id).toMatch(UUID_V4)
      expect(ids.at(-1)).toBe({ 0x00: '00000000-0000-4000-8000-000000000000', 0xff: 'ffffffff-ffff-4fff-bfff-ffffffffffff', 0x5a: '5a5a5a5a-5a5a-4a5a-9a5a-5a5a5a5a5a5a' }[fill])
    }
  })

  it('uses crypto.randomUUID where there is no Buffer (browsers)', async () => {
    const real = globalThis.crypto
    vi.stubGlobal('Buffer', undefined)
    vi.stubGlobal('crypto', { randomUUID: () => '11111111-1111-4111-8111-111111111111', getRandomValues: (a: Uint8Array) => real.getRandomValues(a) })
    expect((await freshRandomUUID())()).toBe('11111111-1111-4111-8111-111111111111')
  })

  it('sets the version and variant bits in the fallback without randomUUID, whatever the random bytes', async () => {
    vi.stubGlobal('Buffer', undefined)
    const uuid = await freshRandomUUID()
    for (const fill of [0x00, 0xff, 0x5a]) {
      vi.stubGlobal('crypto', { getRandomValues: (a: Uint8Array) => a.fill(fill) })
      expect(uuid()).toMatch(UUID_V4)
    }
    vi.stubGlobal('crypto', { getRandomValues: (a: Uint8Array) => a.fill(0xff) })
    expect(uuid()).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff')
  })
})

describe('UTF-8 bytes', () => {
  const samples = ['', 'ascii {"a":1}', 'é', '€uro', '😀 pair', 'lone \ud800 high', 'lone \udc00 low', 'x'.repeat(1000) + 'ü']

  it('utf8ByteLength is Buffer.byteLength where Buffer exists, and utf8Length without it: the same counts', () => {
    for (const text of samples) expect(utf8ByteLength(text)).toBe(Buffer.byteLength(text))
    vi.stubGlobal('Buffer', undefined)
    for (const text of samples) expect(utf8ByteLength(text)).toBe(utf8Length(text))
    for (const text of samples) expect(utf8Length(text)).toBe(new TextEncoder().encode(text).byteLength)
  })

})

describe('timers', () => {
  it('setBackgroundTimeout does not keep the process alive', () => {
    const handle = setBackgroundTimeout(() => {}, 1000) as unknown as NodeJS.Timeout
    expect(handle.hasRef()).toBe(false)
    clearTimeout(handle)
  })

  it('waits about 24.8 days for a longer delay, where a plain timer would fire at once', async () => {
    vi.useFakeTimers()
    const fired = vi.fn()
    setBackgroundTimeout(fired, 2 ** 31)
    setBackgroundTimeout(fired, Infinity)
    await vi.advanceTimersByTimeAsync(2 ** 31 - 2)
    expect(fired).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(1)
    expect(fired).toHaveBeenCalledTimes(2)
    vi.useRealTimers()
  })

  it('sleep resolves after ms, and an abort rejects it with the reason', async () => {
    vi.useFakeTimers()
    let done = false
    void sleep(500).then(() => (done = true))
    await vi.advanceTimersByTimeAsync(499)
    expect(done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(done).toBe(true)

    const controller = new AbortController()
    const slept = sleep(10_000, controller.signal).catch((e) => e)
    controller.abort('stop')
    expect(await slept).toBe('stop')
    expect(vi.getTimerCount()).toBe(0)
    expect(await sleep(1, controller.signal).catch((e) => e)).toBe('stop')
  })
})

describe('process and page hooks in Node', () => {
  it('onProcessIdleExit calls each owner on beforeExit through one listener, and unsubscribes', () => {
    const owners = [{ name: 'a' }, { name: 'b' }]
    const handler = vi.fn()
    const offs = owners.map((owner) => onProcessIdleExit(owner, handler))
    // One listener for every owner, however many subscribe (it is added by the first).
    const listeners = process.listenerCount('beforeExit')
    offs.push(onProcessIdleExit({ name: 'c' }, handler))
    expect(process.listenerCount('beforeExit')).toBe(listeners)
    offs.pop()!()
    process.emit('beforeExit', 0)
    expect(handler.mock.calls).toEqual([[owners[0]], [owners[1]]])
    offs[0]()
    process.emit('beforeExit', 0)
    expect(handler.mock.calls.slice(2)).toEqual([[owners[1]]])
    offs[1]()
  })

  it('is not a browser; onPageHide is a no-op', () => {
    expect(isBrowserPage()).toBe(false)
    expect(isBrowserLike()).toBe(false)
    const off = onPageHide(() => {})
    expect(typeof off).toBe('function')
    off()
  })
})

describe('readDebugSetting', () => {
  it('reads DEBUG from the environment', () => {
    vi.stubEnv('DEBUG', 'analytics,other')
    expect(readDebugSetting()).toBe('analytics,other')
  })

  it('survives a localStorage that throws', () => {
    vi.stubEnv('DEBUG', undefined)
    vi.stubGlobal('localStorage', { getItem: () => { throw new Error('SecurityError') } })
    expect(readDebugSetting()).toBeUndefined()
  })
})

describe('defaultFetch', () => {
  it('looks up the global fetch at call time', async () => {
    const fetch = vi.fn(async () => new Response('hi'))
    vi.stubGlobal('fetch', fetch)
    const response = await defaultFetch('https://collector.test/x', { method: 'POST' })
    expect(await response.text()).toBe('hi')
    expect(fetch).toHaveBeenCalledWith('https://collector.test/x', { method: 'POST' })
  })
})
