/**
 * The browser path, simulated in Node: a page (window + document) without Node's `process.versions.node`.
 * When the page is hidden or unloaded, queued messages are sent with `keepalive`, within its
 * 64 KiB budget; in a browser, bodies are text/plain with the writeKey inside (no CORS preflight).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { resolveOptions } from '../../src/client/options.js'

const versions = Object.getOwnPropertyDescriptor(process, 'versions')!
// Node loads its fetch internals (undici) lazily, and they read process.versions.node: load them
// before the test hides it.
await new Response('{}', { status: 200, headers: { a: 'b' } }).arrayBuffer()
let page: EventTarget
let doc: EventTarget & { visibilityState: string }

beforeEach(() => {
  page = new EventTarget()
  doc = Object.assign(new EventTarget(), { visibilityState: 'visible' })
  vi.stubGlobal('window', page)
  vi.stubGlobal('document', doc)
  vi.stubGlobal('addEventListener', page.addEventListener.bind(page))
  vi.stubGlobal('removeEventListener', page.removeEventListener.bind(page))
  Object.defineProperty(process, 'versions', { ...versions, value: { ...process.versions, node: undefined } })
})

afterEach(() => {
  Object.defineProperty(process, 'versions', versions)
  vi.unstubAllGlobals()
})

function recordingFetch() {
  const calls: Array<{ body: string; init: RequestInit }> = []
  const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
    calls.push({ body: String(init!.body), init: init! })
    return new Response('{}', { status: 200 })
  })
  return { fetch, calls }
}

const track = (client: Client, i: number, bytes = 10) =>
  client.track({ event: `E${i}`, anonymousId: 'a', properties: { pad: 'x'.repeat(bytes) } })

describe('in a browser page', () => {
  it('defaults to text/plain bodies carrying the writeKey', async () => {
    expect(resolveOptions('key').plainText).toBe(true)
    const { fetch, calls } = recordingFetch()
    const client = new Client('key', { fetch, debug: false })
    track(client, 0)
    await client.close()
    expect(calls[0].init.headers).toEqual({ 'Content-Type': 'text/plain' })
    expect(JSON.parse(calls[0].body).writeKey).toBe('key')
  })

  it.each(['pagehide', 'visibilitychange'])('%s sends what is queued at once, with keepalive', async (event) => {
    const { fetch, calls } = recordingFetch()
    const client = new Client('key', { fetch, flushAt: 100, flushAfter: 600_000, debug: false })
    for (let i = 0; i < 3; i++) track(client, i)
    expect(fetch).not.toHaveBeenCalled()
    if (event === 'visibilitychange') {
      doc.dispatchEvent(new Event('visibilitychange')) // still visible: nothing happens
      expect(fetch).not.toHaveBeenCalled()
      doc.visibilityState = 'hidden'
      doc.dispatchEvent(new Event('visibilitychange'))
    } else {
      page.dispatchEvent(new Event('pagehide'))
    }
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    expect(calls[0].init.keepalive).toBe(true)
    expect(JSON.parse(calls[0].body).batch).toHaveLength(3)
    await client.close()
    expect(client.stats()).toMatchObject({ delivered: 3, failed: 0 })
  })

  it('keepalive bodies stay within 64 KiB in all, as many as fit go with keepalive, and the rest is still sent', async () => {
    const { fetch, calls } = recordingFetch()
    const client = new Client('key', { fetch, flushAt: 100, flushAfter: 600_000, debug: false })
    // 8 × ~10 KB ≈ 80 KB queued: more than the 65,536-byte keepalive budget.
    for (let i = 0; i < 8; i++) track(client, i, 10_000)
    page.dispatchEvent(new Event('pagehide'))
    await client.close()
    const keepalive = calls.filter((c) => c.init.keepalive)
    const keptBytes = keepalive.reduce((n, c) => n + Buffer.byteLength(c.body), 0)
    const keptMessages = keepalive.reduce((n, c) => n + JSON.parse(c.body).batch.length, 0)
    expect(keptBytes).toBeLessThanOrEqual(65_536)
    expect(keptMessages).toBe(6)
    expect(calls.reduce((n, c) => n + JSON.parse(c.body).batch.length, 0)).toBe(8)
    expect(client.stats()).toMatchObject({ delivered: 8, failed: 0 })
  })

  it('close() stops listening for page hide', async () => {
    const { fetch, calls } = recordingFetch()
    const client = new Client('key', { fetch, flushAt: 100, debug: false })
    await client.close()
    page.dispatchEvent(new Event('pagehide'))
    await new Promise((r) => setTimeout(r, 0))
    expect(calls).toHaveLength(0)
  })

  it('does not subscribe to process exit', () => {
    const before = process.listenerCount('beforeExit')
    const client = new Client('key', { fetch: recordingFetch().fetch, debug: false })
    expect(process.listenerCount('beforeExit')).toBe(before)
    void client.close()
  })
})
