/**
 * Real Chromium: `persist` (on by default in pages). Messages a page could not deliver survive the
 * page (closed tab, crashed renderer) in localStorage and are sent by the next page on the origin
 * with the same write key; two tabs opening at once send each stored message exactly once; a page
 * whose localStorage throws still tracks and delivers, with one logged line. The dead endpoint is
 * a loopback port nothing listens on (connection refused), so the page's client keeps retrying.
 */
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, startPageServer, type Chromium, type PageServer } from './support/browser.js'
import { startSink, type Sink } from './support/sink.js'

let sink: Sink
let pages: PageServer
let browser: Chromium
/** A loopback URL that refuses connections. */
let down: string
/** A loopback endpoint that answers every batch 400 (with CORS headers, so the page reads it). */
let refuser: Server
let refusing: string

beforeAll(async () => {
  sink = await startSink()
  pages = await startPageServer()
  browser = await launchChromium()
  // A free port, closed again: nothing listens there.
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  down = `http://127.0.0.1:${(probe.address() as { port: number }).port}`
  await new Promise((resolve) => probe.close(resolve))
  refuser = createHttpServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(400, { 'access-control-allow-origin': '*' }).end('{"success":false}'))
  })
  await new Promise<void>((resolve) => refuser.listen(0, '127.0.0.1', resolve))
  refusing = `http://127.0.0.1:${(refuser.address() as { port: number }).port}`
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await pages?.close()
  await sink?.close()
  refuser?.closeAllConnections()
  await new Promise((resolve) => refuser?.close(resolve))
})

interface Opened {
  page: Page
  console: string[]
}

async function open(initScripts: string[] = []): Promise<Opened> {
  const page = await browser.context.newPage()
  const console: string[] = []
  page.on('console', (m) => console.push(m.text()))
  page.on('pageerror', (e) => console.push(`pageerror: ${e.message}`))
  for (const script of initScripts) await page.addInitScript(script)
  await page.goto(`${pages.url}/esm.html`)
  await page.waitForFunction(() => document.title === 'ready', undefined, { timeout: 20_000 }).catch((e: Error) => {
    throw new Error(`esm.html did not load: ${e.message}\n${console.join('\n')}`)
  })
  return { page, console }
}

/** In the page: `window.client = new Client(writeKey, options)`, then `count` tracks tagged `tag`. */
function startClient(page: Page, writeKey: string, options: Record<string, unknown>, tag = '', count = 0): Promise<string[]> {
  return page.evaluate(
    ({ writeKey, options, tag, count }) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client(writeKey, options)
      ;(window as unknown as { client: unknown }).client = client
      const ids: string[] = []
      for (let n = 1; n <= count; n++) ids.push(client.track({ userId: 'u', event: `${tag}-${n}`, properties: { n } }).messageId)
      return ids
    },
    { writeKey, options, tag, count },
  )
}

/** The messageIds this origin's localStorage holds for `writeKey`, once the page has written them. */
async function stored(page: Page, writeKey: string, expected: number): Promise<string[]> {
  const read = () =>
    page.evaluate((prefix) => {
      const ids: string[] = []
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i)!
        // One message's JSON per line.
        if (key.startsWith(prefix)) for (const line of localStorage.getItem(key)!.split('\n')) ids.push((JSON.parse(line) as { messageId: string }).messageId)
      }
      return ids
    }, `isomorphic-analytics:${writeKey}:`)
  const deadline = Date.now() + 10_000
  let ids = await read()
  while (ids.length !== expected && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50))
    ids = await read()
  }
  return ids
}

/**
 * Pages (one per tag, all open at once, so none adopts another's messages) each track `count`
 * events against the dead endpoint (some in flight and retrying, some queued), then go away.
 */
async function leaveBehind(writeKey: string, tags: string[], count: number, end: (page: Page) => Promise<unknown>): Promise<string[]> {
  const opened = await Promise.all(tags.map(() => open()))
  const ids: string[] = []
  for (const [i, { page }] of opened.entries()) {
    ids.push(...(await startClient(page, writeKey, { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, tags[i], count)))
  }
  expect((await stored(opened[0].page, writeKey, ids.length)).sort()).toEqual([...ids].sort())
  for (const { page } of opened) await end(page)
  return ids
}

const received = (tag: string) => sink.messages().filter((m) => m.event?.startsWith(`${tag}-`))

describe('Chromium: persist', () => {
  it('a page closed while the endpoint is down: the next page on the origin delivers its messages', async () => {
    const ids = await leaveBehind('persist-close', ['closed'], 7, (page) => page.close({ runBeforeUnload: true }))
    expect(received('closed')).toEqual([])

    const next = await open()
    await startClient(next.page, 'persist-close', { endpoint: sink.url, flushAfter: 100 })
    await sink.waitForMessages(7, 20_000, (m) => m.event?.startsWith('closed-') ?? false)
    expect(received('closed').map((m) => m.messageId).sort(), next.console.join('\n')).toEqual([...ids].sort())
    // Delivered, so they left storage.
    expect(await stored(next.page, 'persist-close', 0)).toEqual([])
    await next.page.close()
  }, 60_000)

  it('a reload while the endpoint is down: the reloaded page delivers them', async () => {
    const { page } = await open()
    const ids = await startClient(page, 'persist-reload', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'reloaded', 7)
    expect(await stored(page, 'persist-reload', 7)).toHaveLength(7)
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    await startClient(page, 'persist-reload', { endpoint: sink.url, flushAfter: 100 })
    await sink.waitForMessages(7, 20_000, (m) => m.event?.startsWith('reloaded-') ?? false)
    expect(received('reloaded').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await page.close()
  }, 60_000)

  it('a crashed page: the next page delivers its messages', async () => {
    const ids = await leaveBehind('persist-crash', ['crashed'], 6, async (page) => {
      const crashed = new Promise((resolve) => page.once('crash', resolve))
      await page.goto('chrome://crash').catch(() => {})
      await crashed
      await page.close()
    })
    const next = await open()
    await startClient(next.page, 'persist-crash', { endpoint: sink.url, flushAfter: 100 })
    await sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('crashed-') ?? false)
    expect(received('crashed').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await next.page.close()
  }, 60_000)

  it('a tab closed while another is open: the open tab delivers its messages, without a reload', async () => {
    const first = await open()
    const left = await startClient(first.page, 'persist-open', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'left', 6)
    expect(await stored(first.page, 'persist-open', 6)).toHaveLength(6)
    const other = await open()
    // One message of its own, held back, so that its key shows it has started (and looked).
    await startClient(other.page, 'persist-open', { endpoint: sink.url, flushAt: 100, flushAfter: 300 }, 'stayed', 1)
    expect(await stored(other.page, 'persist-open', 7)).toHaveLength(7)
    await new Promise((r) => setTimeout(r, 500))
    expect(received('left')).toEqual([])
    await first.page.close()
    await sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('left-') ?? false)
    await new Promise((r) => setTimeout(r, 500))
    expect(received('left').map((m) => m.messageId).sort()).toEqual([...left].sort())
    await other.page.close()
  }, 60_000)

  it('two tabs opened at once deliver each stored message exactly once', async () => {
    const ids = await leaveBehind('persist-tabs', ['tabs1', 'tabs2', 'tabs3'], 8, (page) => page.close())
    const tabs = await Promise.all([open(), open()])
    await Promise.all(tabs.map(({ page }) => startClient(page, 'persist-tabs', { endpoint: sink.url, flushAfter: 100 })))
    const isTabs = (m: { event?: string }) => /^tabs\d-/.test(m.event ?? '')
    await sink.waitForMessages(24, 20_000, isTabs)
    // Give a second sender time to show up, if there were one.
    await new Promise((r) => setTimeout(r, 1500))
    const got = sink.messages().filter(isTabs).map((m) => m.messageId)
    expect(got.sort()).toEqual([...ids].sort())
    for (const { page } of tabs) expect(await stored(page, 'persist-tabs', 0)).toEqual([])
    for (const { page } of tabs) await page.close()
  }, 90_000)

  it('a tab opened after this one, closed with messages stored: this one delivers them, without a reload', async () => {
    const first = await open()
    await startClient(first.page, 'persist-late', { endpoint: sink.url, flushAfter: 100 })
    const later = await open()
    const left = await startClient(later.page, 'persist-late', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'late', 6)
    expect(await stored(later.page, 'persist-late', 6)).toHaveLength(6)
    await later.page.close()
    await sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('late-') ?? false)
    expect(received('late').map((m) => m.messageId).sort(), first.console.join('\n')).toEqual([...left].sort())
    await first.page.close()
  }, 60_000)

  it('a client closed in a page lets the next client on that page take what a closed tab left', async () => {
    const leaving = await open()
    const left = await startClient(leaving.page, 'persist-reopen', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'reopened', 3)
    expect(await stored(leaving.page, 'persist-reopen', 3)).toHaveLength(3)
    const app = await open()
    // A single-page app: a client, closed, then another one with the same write key.
    await startClient(app.page, 'persist-reopen', { endpoint: sink.url, flushAfter: 100 })
    await app.page.evaluate(() => (window as unknown as { client: { close(): Promise<unknown> } }).client.close())
    await startClient(app.page, 'persist-reopen', { endpoint: sink.url, flushAfter: 100 })
    await leaving.page.close()
    await sink.waitForMessages(3, 20_000, (m) => m.event?.startsWith('reopened-') ?? false)
    expect(received('reopened').map((m) => m.messageId).sort(), app.console.join('\n')).toEqual([...left].sort())
    await app.page.close()
  }, 60_000)

  it('quick page views: a message stored when its page went away is sent by the next page, not by every later one', async () => {
    const { page } = await open()
    const views = 6
    const ids: string[] = []
    for (let view = 0; view < views; view++) {
      if (view > 0) {
        await page.goto(`${pages.url}/esm.html`)
        await page.waitForFunction(() => document.title === 'ready')
      }
      // The default flushAfter (5 s): each view is left long before its timer would fire.
      ids.push(...(await startClient(page, 'persist-views', { endpoint: sink.url }, `view${view}`, 1)))
      await new Promise((r) => setTimeout(r, 300))
    }
    await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    await sink.waitForMessages(views, 20_000, (m) => /^view\d-/.test(m.event ?? ''))
    const sent = sink.messages().filter((m) => /^view\d-/.test(m.event ?? '')).map((m) => m.messageId)
    expect(new Set(sent)).toEqual(new Set(ids))
    // Sent with keepalive as its page went away, and at most once more by the next page.
    for (const id of ids) expect(sent.filter((s) => s === id).length, id).toBeLessThanOrEqual(2)
    await page.close()
  }, 60_000)

  it('a page whose queue is full when it takes a list over drops that list (reported) and still sends its own on time', async () => {
    await leaveBehind('persist-full', ['dropped'], 3, (page) => page.close())
    const next = await open()
    // Its two messages fill the queue before the lock of the closed page's list is granted.
    const own = await startClient(next.page, 'persist-full', { endpoint: sink.url, maxQueueSize: 2, flushAfter: 300 }, 'own', 2)
    await sink.waitForMessages(2, 10_000, (m) => m.event?.startsWith('own-') ?? false)
    expect(received('own').map((m) => m.messageId).sort(), next.console.join('\n')).toEqual([...own].sort())
    expect(await next.page.evaluate(() => (window as unknown as { client: { stats(): { dropped: number } } }).client.stats().dropped)).toBe(3)
    await next.page.close()
  }, 60_000)

  it('a stored bigint keeps its digits when the next page sends it', async () => {
    const { page } = await open()
    await page.evaluate((down) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client('persist-bigint', { endpoint: down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 })
      client.track({ userId: 'u', event: 'bigint-1', properties: { id: 12345678901234567890n } })
    }, down)
    expect(await stored(page, 'persist-bigint', 1)).toHaveLength(1)
    await page.reload()
    await page.waitForFunction(() => document.title === 'ready')
    await startClient(page, 'persist-bigint', { endpoint: sink.url, flushAfter: 100 })
    await sink.waitForMessages(1, 20_000, (m) => m.event === 'bigint-1')
    expect(sink.batches().find((r) => r.raw.includes('"bigint-1"'))!.raw).toContain('"properties":{"id":12345678901234567890}')
    await page.close()
  }, 60_000)

  it('a page that cannot store what it adopts (quota) leaves it stored for the next page', async () => {
    const ids = await leaveBehind('persist-quota', ['quota1'], 5, (page) => page.close())
    // This page's storage refuses every write; its endpoint is down too, so it delivers nothing.
    const full = await open(["Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError') }"])
    await startClient(full.page, 'persist-quota', { endpoint: down, flushAfter: 100, minRetryDelay: 200 })
    await full.page.waitForFunction(() => (window as unknown as { client: { stats(): { inFlight: number } } }).client.stats().inFlight === 5)
    await full.page.close()
    const next = await open()
    await startClient(next.page, 'persist-quota', { endpoint: sink.url, flushAfter: 100 })
    await sink.waitForMessages(5, 20_000, (m) => m.event?.startsWith('quota1-') ?? false)
    expect(received('quota1').map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await next.page.close()
  }, 60_000)

  it('storage stays bounded by maxQueueSize: what is dropped is reported, not stored', async () => {
    const { page } = await open()
    await startClient(page, 'persist-bound', { endpoint: down, flushAt: 5, flushAfter: 600_000, maxQueueSize: 10 }, 'bound', 25)
    expect(await stored(page, 'persist-bound', 10)).toHaveLength(10)
    expect(await page.evaluate(() => (window as unknown as { client: { stats(): { dropped: number } } }).client.stats().dropped)).toBe(15)
    await page.close()
  }, 60_000)

  it('a message that failed for good leaves storage', async () => {
    const { page } = await open()
    // 400 is not retried: the batch fails for good (and is reported).
    await startClient(page, 'persist-failed', { endpoint: refusing, flushAt: 100 }, 'failed', 4)
    expect(await stored(page, 'persist-failed', 4)).toHaveLength(4)
    const result = await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    expect(result).toEqual({ delivered: 0, failed: 4 })
    expect(await stored(page, 'persist-failed', 0)).toEqual([])
    await page.close()
  }, 60_000)

  it.each([
    ['localStorage itself throws (storage blocked)', "Object.defineProperty(window, 'localStorage', { get() { throw new DOMException('The operation is insecure.', 'SecurityError') } })"],
    ['every write throws (quota exceeded)', "Storage.prototype.setItem = function () { throw new DOMException('quota', 'QuotaExceededError') }"],
  ])('%s: the page still tracks and delivers, with one logged line', async (_name, breakStorage) => {
    const { page, console } = await open([breakStorage])
    const tag = breakStorage.includes('SecurityError') ? 'blocked' : 'quota'
    const ids = await startClient(page, `persist-${tag}`, { endpoint: sink.url, flushAt: 100 }, tag, 30)
    const result = await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    expect(result, console.join('\n')).toEqual({ delivered: 30, failed: 0 })
    expect(received(tag).map((m) => m.messageId).sort()).toEqual([...ids].sort())
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
