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
  vi.useRealTimers()
  vi.restoreAllMocks()
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

/**
 * A fetch whose answers are scripted: `answers[i]` for the i-th call (the last one repeats); an
 * answer `'hang'` never settles until `release()`.
 */
function scriptedFetch(...answers: Array<number | 'hang'>) {
  const calls: Array<{ body: string | Uint8Array; init: RequestInit }> = []
  const hanging: Array<() => void> = []
  const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
    calls.push({ body: init!.body as string | Uint8Array, init: init! })
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)]
    if (answer === 'hang') await new Promise<void>((resolve) => hanging.push(resolve))
    return new Response('{}', { status: answer === 'hang' ? 200 : answer })
  })
  return { fetch, calls, release: () => hanging.splice(0).forEach((resolve) => resolve()) }
}

const hide = () => page.dispatchEvent(new Event('pagehide'))
const messagesOf = (call: { body: string | Uint8Array }) => (JSON.parse(String(call.body)) as { batch: unknown[] }).batch.length

describe('page hide, batches that wait (persist off)', () => {
  it('a batch waiting to retry is sent at once with keepalive, and not again when its wait ends', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const { fetch, calls } = scriptedFetch(503, 200)
    const client = new Client('key', { fetch, flushAt: 3, minRetryDelay: 60_000, maxRetryDelay: 60_000, persist: false, debug: false })
    for (let i = 0; i < 3; i++) track(client, i)
    await vi.advanceTimersByTimeAsync(100)
    expect(calls).toHaveLength(1)
    expect(client.stats()).toMatchObject({ inFlight: 3, retries: 1 })
    hide()
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toHaveLength(2)
    expect(calls[1].init.keepalive).toBe(true)
    expect(messagesOf(calls[1])).toBe(3)
    expect(client.stats()).toMatchObject({ inFlight: 0, delivered: 3, retries: 1 })
    // Its retry delay (30 s) passes: nothing more is sent.
    await vi.advanceTimersByTimeAsync(120_000)
    expect(calls).toHaveLength(2)
    await client.close()
  })

  it('with gzip, the batch is sent again uncompressed (the page may be gone before compression ends)', async () => {
    vi.useFakeTimers()
    const { fetch, calls } = scriptedFetch(503, 200)
    const client = new Client('key', { fetch, flushAt: 2, gzip: true, minRetryDelay: 60_000, maxRetryDelay: 60_000, persist: false, debug: false })
    for (let i = 0; i < 2; i++) track(client, i)
    await vi.waitFor(() => expect(client.stats().retries).toBe(1))
    expect(calls[0].body).toBeInstanceOf(Uint8Array)
    hide()
    await vi.waitFor(() => expect(calls).toHaveLength(2))
    expect(calls[1].init.keepalive).toBe(true)
    expect(calls[1].init.headers).toEqual({ 'Content-Type': 'text/plain' })
    expect(messagesOf(calls[1])).toBe(2)
    await client.close()
    expect(client.stats()).toMatchObject({ delivered: 2, failed: 0 })
  })

  it('batches waiting for a connection slot are sent at once with keepalive; the slots they were late for are freed', async () => {
    const { fetch, calls, release } = scriptedFetch('hang', 200)
    const client = new Client('key', { fetch, flushAt: 1, maxConcurrentRequests: 1, persist: false, debug: false })
    for (let i = 0; i < 3; i++) track(client, i)
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    await new Promise((r) => setTimeout(r, 10))
    expect(calls).toHaveLength(1)
    hide()
    await vi.waitFor(() => expect(calls).toHaveLength(3))
    expect(calls.map((c) => Boolean(c.init.keepalive))).toEqual([false, true, true])
    release()
    await vi.waitFor(() => expect(client.stats()).toMatchObject({ inFlight: 0, delivered: 3 }))
    expect(calls).toHaveLength(3)
    // The one slot is free again: later batches go one after another, as before.
    for (let i = 3; i < 5; i++) track(client, i)
    await vi.waitFor(() => expect(client.stats()).toMatchObject({ inFlight: 0, delivered: 5 }))
    expect(calls).toHaveLength(5)
    await client.close()
  })

  it('what is queued takes the keepalive budget first; a waiting batch over what is left goes at once without it', async () => {
    vi.useFakeTimers()
    const { fetch, calls } = scriptedFetch(503, 200)
    const client = new Client('key', { fetch, flushAt: 4, flushAfter: 600_000, minRetryDelay: 60_000, maxRetryDelay: 60_000, persist: false, debug: false })
    // A batch of 4 × ~10 KB waits to retry; 3 × ~10 KB more are queued (one request of ~30 KB).
    for (let i = 0; i < 7; i++) track(client, i, 10_000)
    await vi.advanceTimersByTimeAsync(100)
    expect(calls).toHaveLength(1)
    hide()
    await vi.advanceTimersByTimeAsync(0)
    const sent = calls.slice(1).map((c) => [messagesOf(c), Boolean(c.init.keepalive)])
    expect(sent.sort()).toEqual([[3, true], [4, false]])
    await settle(client.close())
    expect(client.stats()).toMatchObject({ delivered: 7, failed: 0 })
  })

  it('what is queued goes at once even when every connection slot is taken', async () => {
    const { fetch, calls, release } = scriptedFetch('hang', 200)
    const client = new Client('key', { fetch, flushAt: 1, maxConcurrentRequests: 1, persist: false, debug: false })
    track(client, 0)
    await vi.waitFor(() => expect(calls).toHaveLength(1))
    // Two more, and the page is hidden before their dispatch (a microtask later): it sends them.
    track(client, 1)
    track(client, 2)
    hide()
    await vi.waitFor(() => expect(calls).toHaveLength(3))
    expect(calls.map((c) => Boolean(c.init.keepalive))).toEqual([false, true, true])
    release()
    await client.close()
    expect(client.stats()).toMatchObject({ delivered: 3, failed: 0 })
  })
})

async function settle<T>(promise: Promise<T>): Promise<T> {
  let done = false
  void promise.finally(() => (done = true))
  for (let i = 0; i < 100 && !done; i++) await vi.advanceTimersByTimeAsync(1000)
  return promise
}

