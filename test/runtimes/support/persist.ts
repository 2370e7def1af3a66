/**
 * Real Chromium with `persist`: one browser, page server, sink and refusing port per test file,
 * and the page-side steps the persist tests share. A page's client stores its messages under
 * `isomorphic-analytics:<writeKey>:<uuid>`, one message's JSON per line (src/queue/page-store.ts).
 */
import { createServer } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { launchChromium, startPageServer, type Chromium, type PageServer } from './browser.js'
import { startSink, type Sink } from './sink.js'

export interface Opened {
  page: Page
  console: string[]
}

export interface PersistWorld {
  sink: Sink
  /** The page server's origin, `http://127.0.0.1:<port>` (its pages: support/browser.ts). */
  pagesUrl: string
  /** A loopback URL that refuses connections: a client there keeps retrying. */
  down: string
  open(initScripts?: string[]): Promise<Opened>
  /** In the page: `window.client = new Client(writeKey, options)`, then `count` tracks tagged `tag`; their messageIds. */
  startClient(page: Page, writeKey: string, options: Record<string, unknown>, tag?: string, count?: number): Promise<string[]>
  /** The messageIds this origin's localStorage holds for `writeKey`, once there are `expected` (or after 10 s). */
  stored(page: Page, writeKey: string, expected: number): Promise<string[]>
  /** Each stored list of `writeKey`, by the uuid that ends its key, as the page reads it. */
  lists(page: Page, writeKey: string): Promise<Record<string, string>>
  /**
   * Replaces every stored list of `writeKey` with `lists` (by uuid): a state that pages which are
   * gone left, with no lock held on any of them.
   */
  restore(page: Page, writeKey: string, lists: Record<string, string>): Promise<void>
  /**
   * Pages (one per tag, opened at once) each track `count` events against the dead endpoint,
   * then `end` each in turn. While one ends, those still open take its list over (and store it).
   */
  leaveBehind(writeKey: string, tags: string[], count: number, end: (page: Page) => Promise<unknown>): Promise<string[]>
  /** What the sink received of the events tagged `tag`. */
  received(tag: string): Array<{ messageId?: string; event?: string }>
}

/** Registers this file's beforeAll/afterAll; the world is ready inside tests. */
export function usePersistWorld(): PersistWorld {
  let pages: PageServer
  let browser: Chromium
  const world = {} as PersistWorld

  beforeAll(async () => {
    world.sink = await startSink()
    pages = await startPageServer()
    world.pagesUrl = pages.url
    browser = await launchChromium()
    // A free port, closed again: nothing listens there.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    world.down = `http://127.0.0.1:${(probe.address() as { port: number }).port}`
    await new Promise((resolve) => probe.close(resolve))
  }, 120_000)

  afterAll(async () => {
    await browser?.close()
    await pages?.close()
    await world.sink?.close()
  })

  world.open = async (initScripts = []) => {
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

  world.startClient = (page, writeKey, options, tag = '', count = 0) =>
    page.evaluate(
      ({ writeKey, options, tag, count }) => {
        const IA = (window as unknown as { IA: typeof import('../../../src/index.js') }).IA
        const client = new IA.Client(writeKey, options)
        ;(window as unknown as { client: unknown }).client = client
        const ids: string[] = []
        for (let n = 1; n <= count; n++) ids.push(client.track({ userId: 'u', event: `${tag}-${n}`, properties: { n } }).messageId)
        return ids
      },
      { writeKey, options, tag, count },
    )

  world.lists = (page, writeKey) =>
    page.evaluate((prefix) => {
      const lists: Record<string, string> = {}
      for (let i = 0; i < localStorage.length; i++) {
        const key = localStorage.key(i)!
        if (key.startsWith(prefix)) lists[key.slice(prefix.length)] = localStorage.getItem(key)!
      }
      return lists
    }, `isomorphic-analytics:${writeKey}:`)

  world.restore = (page, writeKey, lists) =>
    page.evaluate(({ prefix, lists }) => {
      for (const key of Object.keys(localStorage)) if (key.startsWith(prefix)) localStorage.removeItem(key)
      for (const [uuid, text] of Object.entries(lists)) localStorage.setItem(prefix + uuid, text)
    }, { prefix: `isomorphic-analytics:${writeKey}:`, lists })

  world.stored = async (page, writeKey, expected) => {
    // One message's JSON per line.
    const read = async () => Object.values(await world.lists(page, writeKey)).flatMap((text) => text.split('\n').map((line) => (JSON.parse(line) as { messageId: string }).messageId))
    const deadline = Date.now() + 10_000
    let ids = await read()
    while (ids.length !== expected && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50))
      ids = await read()
    }
    return ids
  }

  world.leaveBehind = async (writeKey, tags, count, end) => {
    const opened = await Promise.all(tags.map(() => world.open()))
    const ids: string[] = []
    for (const [i, { page }] of opened.entries()) {
      ids.push(...(await world.startClient(page, writeKey, { endpoint: world.down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, tags[i], count)))
    }
    expect((await world.stored(opened[0].page, writeKey, ids.length)).sort()).toEqual([...ids].sort())
    for (const { page } of opened) await end(page)
    return ids
  }

  world.received = (tag) => world.sink.messages().filter((m) => m.event?.startsWith(`${tag}-`))

  return world
}
