/**
 * Real Chromium: `persist` (on by default in pages), one page at a time. Messages a page could not
 * deliver survive the page (closed tab, reload, crashed renderer) in localStorage and are sent by
 * the next page on the origin with the same write key; storage stays bounded and lets go of what
 * failed for good; a page whose localStorage throws still tracks and delivers, with one logged
 * line. The dead endpoint is a loopback port nothing listens on (connection refused), so the
 * page's client keeps retrying. (Across tabs: chromium-persist-tabs.test.ts.)
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { MAX_STORED_CHARS } from '../../src/queue/page-store.js'
import { usePersistWorld } from './support/persist.js'

const w = usePersistWorld()
/** A loopback endpoint that answers every batch 400 (with CORS headers, so the page reads it). */
let refuser: Server
let refusing: string

beforeAll(async () => {
  refuser = createHttpServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(400, { 'access-control-allow-origin': '*' }).end('{"success":false}'))
  })
  await new Promise<void>((resolve) => refuser.listen(0, '127.0.0.1', resolve))
  refusing = `http://127.0.0.1:${(refuser.address() as { port: number }).port}`
})

afterAll(async () => {
  refuser?.closeAllConnections()
  await new Promise((resolve) => refuser?.close(resolve))
})

describe('Chromium: persist', () => {
  it('a page closed while the endpoint is down: the next page on the origin delivers its messages', async () => {
    const ids = await w.leaveBehind('persist-close', ['closed'], 7, (page) => page.close({ runBeforeUnload: true }))
    expect(w.received('closed')).toEqual([])

    const next = await w.open()
    await w.startClient(next.page, 'persist-close', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(7, 20_000, (m) => m.event?.startsWith('closed-') ?? false)
    expect(w.received('closed').map((m) => m.messageId).sort(), next.console.join('\n')).toEqual([...ids].sort())
    // Delivered, so they left storage.
    expect(await w.stored(next.page, 'persist-close', 0)).toEqual([])
    await next.page.close()
  }, 60_000)

  it('a reload while the endpoint is down: the reloaded page delivers them', async () => {
    const { page } = await w.open()
    const ids = await w.startClient(page, 'persist-reload', { endpoint: w.down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'reloaded', 7)
    expect(await w.stored(page, 'persist-reload', 7)).toHaveLength(7)
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    await w.startClient(page, 'persist-reload', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(7, 20_000, (m) => m.event?.startsWith('reloaded-') ?? false)
    expect(w.received('reloaded').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await page.close()
  }, 60_000)

  it('a page that tracks and navigates in the same task (endpoint down): the next page delivers its messages', async () => {
    // Each Web Lock is held at once but its callback runs 1 s late: the grant a page waits for
    // (a task or more) made long enough to leave in, whatever the machine's speed.
    const { page, console } = await w.open([`(() => {
      const request = LockManager.prototype.request
      LockManager.prototype.request = function (name, callback) {
        return request.call(this, name, (lock) => new Promise((r) => setTimeout(r, 1000)).then(() => callback(lock)))
      }
    })()`])
    // Tracked, then left at once, before the page's own lock is granted.
    await page.evaluate((down) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client('persist-quick', { endpoint: down, flushAt: 100, flushAfter: 600_000 })
      for (let n = 1; n <= 5; n++) client.track({ userId: 'u', event: `quick-${n}` })
      location.replace('/esm.html?next')
    }, w.down).catch(() => {})
    await page.waitForURL('**/esm.html?next')
    await page.waitForFunction(() => document.title === 'ready')
    expect(await w.stored(page, 'persist-quick', 5), console.join('\n')).toHaveLength(5)
    await w.startClient(page, 'persist-quick', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(5, 20_000, (m) => m.event?.startsWith('quick-') ?? false)
    expect(w.received('quick').map((m) => m.event).sort()).toEqual(['quick-1', 'quick-2', 'quick-3', 'quick-4', 'quick-5'])
    await page.close()
  }, 60_000)

  it('a crashed page: the next page delivers its messages', async () => {
    const ids = await w.leaveBehind('persist-crash', ['crashed'], 6, async (page) => {
      const crashed = new Promise((resolve) => page.once('crash', resolve))
      await page.goto('chrome://crash').catch(() => {})
      await crashed
      await page.close()
    })
    const next = await w.open()
    await w.startClient(next.page, 'persist-crash', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('crashed-') ?? false)
    expect(w.received('crashed').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await next.page.close()
  }, 60_000)

  it('a stored bigint keeps its digits when the next page sends it', async () => {
    const { page } = await w.open()
    await page.evaluate((down) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client('persist-bigint', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 })
      client.track({ userId: 'u', event: 'bigint-1', properties: { id: 12345678901234567890n } })
    }, w.down)
    expect(await w.stored(page, 'persist-bigint', 1)).toHaveLength(1)
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    await w.startClient(page, 'persist-bigint', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(1, 20_000, (m) => m.event === 'bigint-1')
    expect(w.sink.batches().find((r) => r.raw.includes('"bigint-1"'))!.raw).toContain('"properties":{"id":12345678901234567890}')
    await page.close()
  }, 60_000)

  it('a page that cannot store what it adopts (quota) leaves it stored for the next page', async () => {
    const ids = await w.leaveBehind('persist-quota', ['quota1'], 5, (page) => page.close())
    // This page's storage refuses every write; its endpoint is down too, so it delivers nothing.
    const full = await w.open(["Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError') }"])
    await w.startClient(full.page, 'persist-quota', { endpoint: w.down, flushAfter: 100, minRetryDelay: 200 })
    await full.page.waitForFunction(() => (window as unknown as { client: { stats(): { inFlight: number } } }).client.stats().inFlight === 5)
    await full.page.close()
    const next = await w.open()
    await w.startClient(next.page, 'persist-quota', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(5, 20_000, (m) => m.event?.startsWith('quota1-') ?? false)
    expect(w.received('quota1').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await next.page.close()
  }, 60_000)

  it('storage stays bounded by maxQueueSize: what is dropped is reported, not stored', async () => {
    const { page } = await w.open()
    await w.startClient(page, 'persist-bound', { endpoint: w.down, flushAt: 5, flushAfter: 600_000, maxQueueSize: 10 }, 'bound', 25)
    expect(await w.stored(page, 'persist-bound', 10)).toHaveLength(10)
    expect(await page.evaluate(() => (window as unknown as { client: { stats(): { dropped: number } } }).client.stats().dropped)).toBe(15)
    await page.close()
  }, 60_000)

  /**
   * In `page`: a client whose fetch answers 503 while `window.mode` is 'fail' (then goes through
   * to the sink), and `count` tracks of ~1,150 characters each.
   */
  const startFailing = (page: Page, writeKey: string, tag: string, count: number) =>
    page.evaluate(({ writeKey, sink, tag, count }) => {
      const w = window as unknown as { IA: typeof import('../../src/index.js'); mode: string; client: unknown }
      w.mode = 'fail'
      const fetch = (url: string, init?: RequestInit) => (w.mode === 'fail' ? Promise.resolve(new Response('', { status: 503 })) : globalThis.fetch(url, init))
      const client = new w.IA.Client(writeKey, { endpoint: sink, fetch, flushAt: 20, maxRetries: 100, minRetryDelay: 500, maxRetryDelay: 1000 })
      w.client = client
      const pad = 'p'.repeat(1000)
      return Array.from({ length: count }, (_, n) => client.track({ userId: 'u', event: `${tag}-${n + 1}`, properties: { pad } }).messageId)
    }, { writeKey, sink: w.sink.url, tag, count })

  /** The messageIds stored for `writeKey`, once there are some (its page writes once it holds its lock). */
  const storedSome = async (page: Page, writeKey: string) => {
    await page.waitForFunction((prefix) => Object.keys(localStorage).some((key) => key.startsWith(prefix)), `isomorphic-analytics:${writeKey}:`)
    const lists = Object.values(await w.lists(page, writeKey))
    return lists.flatMap((text) => text.split('\n').map((line) => (JSON.parse(line) as { messageId: string }).messageId))
  }

  it(`an outage keeps at most ${MAX_STORED_CHARS.toLocaleString('en')} characters stored (the oldest): the app's own writes still fit, and every message is delivered once it ends`, async () => {
    // Counts writes of the client's list.
    const { page, console } = await w.open([`(() => {
      const setItem = Storage.prototype.setItem
      window.listWrites = 0
      Storage.prototype.setItem = function (key, value) {
        if (key.startsWith('isomorphic-analytics:')) window.listWrites++
        return setItem.call(this, key, value)
      }
    })()`])
    // ~3.4 million characters: most of the ~5 million an origin has.
    const ids = await startFailing(page, 'persist-outage', 'outage', 3000)
    const stored = await storedSome(page, 'persist-outage')
    const lists = Object.values(await w.lists(page, 'persist-outage'))
    expect(lists).toHaveLength(1)
    expect(lists[0].length).toBeLessThanOrEqual(MAX_STORED_CHARS)
    expect(lists[0].length).toBeGreaterThan(MAX_STORED_CHARS - 1200)
    expect(stored, console.join('\n')).toEqual(ids.slice(0, stored.length))
    // More messages over the bound: the list is not written again for them.
    const writes = await page.evaluate(async () => {
      const w = window as unknown as { client: { track(m: object): unknown }; listWrites: number }
      const before = w.listWrites
      for (let n = 0; n < 20; n++) {
        w.client.track({ userId: 'u', event: 'outage-more' })
        await new Promise((r) => setTimeout(r, 0))
      }
      return w.listWrites - before
    })
    expect(writes).toBe(0)
    // The app's own 2.5 million characters still fit beside it.
    expect(await page.evaluate(() => {
      try {
        localStorage.setItem('app:cart', 'c'.repeat(2_500_000))
        return 'ok'
      } catch (error) {
        return String(error)
      } finally {
        localStorage.removeItem('app:cart')
      }
    })).toBe('ok')
    // The outage ends: every message is delivered, those held in memory only too, and storage empties.
    const result = await page.evaluate(() => {
      const w = window as unknown as { mode: string; client: { flush(): Promise<unknown> } }
      w.mode = 'ok'
      return w.client.flush()
    })
    expect(result).toEqual({ delivered: 3020, failed: 0 })
    expect(new Set(w.received('outage').map((m) => m.messageId)).size).toBe(3020)
    expect(await w.stored(page, 'persist-outage', 0)).toEqual([])
    await page.close()
  }, 60_000)

  it('a page that leaves during an outage hands on the oldest messages it stored; the next page delivers them', async () => {
    const { page } = await w.open()
    const ids = await startFailing(page, 'persist-handon', 'handon', 1500)
    const stored = await storedSome(page, 'persist-handon')
    expect(stored.length).toBeGreaterThan(500)
    expect(stored.length).toBeLessThan(1500)
    await page.close()
    const next = await w.open()
    await w.startClient(next.page, 'persist-handon', { endpoint: w.sink.url, flushAfter: 100 })
    await w.sink.waitForMessages(stored.length, 20_000, (m) => m.event?.startsWith('handon-') ?? false)
    await new Promise((r) => setTimeout(r, 500))
    expect(w.received('handon').map((m) => m.messageId).sort()).toEqual(ids.slice(0, stored.length).sort())
    await next.page.close()
  }, 60_000)

  it('a message that failed for good leaves storage', async () => {
    const { page } = await w.open()
    // 400 is not retried: the batch fails for good (and is reported).
    await w.startClient(page, 'persist-failed', { endpoint: refusing, flushAt: 100 }, 'failed', 4)
    expect(await w.stored(page, 'persist-failed', 4)).toHaveLength(4)
    const result = await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    expect(result).toEqual({ delivered: 0, failed: 4 })
    expect(await w.stored(page, 'persist-failed', 0)).toEqual([])
    await page.close()
  }, 60_000)

  it.each([
    ['localStorage itself throws (storage blocked)', "Object.defineProperty(window, 'localStorage', { get() { throw new DOMException('The operation is insecure.', 'SecurityError') } })"],
    ['every write throws (quota exceeded)', "Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError') }"],
  ])('%s: the page still tracks and delivers, with one logged line', async (_name, breakStorage) => {
    const { page, console } = await w.open([breakStorage])
    const tag = breakStorage.includes('SecurityError') ? 'blocked' : 'quota'
    const ids = await w.startClient(page, `persist-${tag}`, { endpoint: w.sink.url, flushAt: 100 }, tag, 30)
    const result = await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    expect(result, console.join('\n')).toEqual({ delivered: 30, failed: 0 })
    expect(w.received(tag).map((m) => m.messageId).sort()).toEqual([...ids].sort())
    // More bursts on the same client: still one line.
    const more = await page.evaluate(async () => {
      const client = (window as unknown as { client: { track(m: object): unknown; flush(): Promise<unknown> } }).client
      for (let n = 0; n < 5; n++) client.track({ userId: 'u', event: 'more' })
      await new Promise((r) => setTimeout(r, 10))
      for (let n = 0; n < 5; n++) client.track({ userId: 'u', event: 'more' })
      return client.flush()
    })
    expect(more).toEqual({ delivered: 10, failed: 0 })
    const lines = console.filter((line) => line.includes('localStorage'))
    expect(lines, console.join('\n')).toHaveLength(1)
    expect(lines[0]).toMatch(/^isomorphic-analytics: localStorage failed \(.*(SecurityError|QuotaExceededError|quota|insecure).*\); messages are kept in memory only\.$/)
    expect(console.filter((line) => line.startsWith('pageerror'))).toEqual([])
    await page.close()
  }, 60_000)
})
