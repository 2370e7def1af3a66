/**
 * Real Chromium (Debian's, through playwright-core): the ESM build through an import map and the
 * IIFE build from a <script> tag track and flush to a loopback sink on ANOTHER origin, in the
 * CORS-free form (text/plain, writeKey in the body, no preflight); `localStorage.debug` turns on
 * logging; messageIds stay v4 UUIDs without `crypto.randomUUID`; a module Web Worker delivers too.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { MARK_KEEPALIVE, useChromium } from './support/browser.js'
import { UUID_V4 } from './support/sink.js'

const w = useChromium()

async function open(path: string, initScripts: string[] = []): Promise<{ page: Page; console: string[] }> {
  const page = await w.browser.context.newPage()
  const console: string[] = []
  page.on('console', (m) => console.push(m.type() === 'debug' ? m.text() : `[${m.type()}] ${m.text()}`))
  page.on('pageerror', (e) => console.push(`pageerror: ${e.message}`))
  for (const script of [MARK_KEEPALIVE, ...initScripts]) await page.addInitScript(script)
  await page.goto(`${w.pages.url}${path}`)
  await page.waitForFunction(() => document.title === 'ready', undefined, { timeout: 20_000 }).catch((e: Error) => {
    throw new Error(`${path} did not load: ${e.message}\n${console.join('\n')}`)
  })
  return { page, console }
}

interface Tracked {
  ids: string[]
  result: { delivered: number; failed: number }
  plainText?: boolean
}

/** In the page: a Client from `window.IA` tracks `count` events tagged `tag`, then flushes. */
function trackAndFlush(page: Page, tag: string, count = 3, options: Record<string, unknown> = {}): Promise<Tracked> {
  return page.evaluate(
    async ({ sink, tag, count, options }) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client('browser-key', { endpoint: sink, flushAt: 100, ...options })
      const ids: string[] = []
      for (let n = 1; n <= count; n++) ids.push(client.track({ userId: 'browser-user', event: `${tag}-${n}`, properties: { n } }).messageId)
      const result = await client.flush()
      await client.close()
      return { ids, result }
    },
    { sink: w.sink.url, tag, count, options },
  )
}

function requestsFor(ids: string[]) {
  return w.sink.batches().filter((r) => r.body?.batch.some((m) => ids.includes(m.messageId)))
}

/** Delivered by a cross-origin CORS "simple request": text/plain, key in the body, no preflight. */
function expectCorsFree(ids: string[], writeKey = 'browser-key'): void {
  const requests = requestsFor(ids)
  expect(requests.length).toBeGreaterThan(0)
  for (const request of requests) {
    expect(request.headers['content-type']).toMatch(/^text\/plain\b/)
    expect(request.headers.authorization).toBeUndefined()
    expect(request.body?.writeKey).toBe(writeKey)
    expect(request.headers.origin).toBe(w.pages.url)
  }
  expect(w.sink.requests.filter((r) => r.method === 'OPTIONS' && r.path === '/v1/batch')).toEqual([])
}

describe('Chromium page', () => {
  it('ESM build through an import map: track + flush() delivers, CORS-free, without keepalive', async () => {
    const { page, console } = await open('/esm.html')
    const { ids, result } = await trackAndFlush(page, 'esm')
    expect(result, console.join('\n')).toEqual({ delivered: 3, failed: 0 })
    const received = w.sink.messages().filter((m) => m.event?.startsWith('esm-'))
    expect(received.map((m) => m.messageId).sort()).toEqual([...ids].sort())
    expectCorsFree(ids)
    expect(requestsFor(ids).map((r) => r.query.get('keepalive'))).toEqual(['0'])
    await page.close()
  }, 60_000)

  it('IIFE build from a <script> tag: new IsomorphicAnalytics.Client(...) tracks and flushes', async () => {
    const { page } = await open('/iife.html')
    expect(await page.evaluate(() => typeof (globalThis as { IsomorphicAnalytics?: { Client?: unknown } }).IsomorphicAnalytics?.Client)).toBe('function')
    const { ids, result } = await trackAndFlush(page, 'iife')
    expect(result).toEqual({ delivered: 3, failed: 0 })
    expect(w.sink.messages().filter((m) => m.event?.startsWith('iife-')).map((m) => m.messageId).sort()).toEqual([...ids].sort())
    expectCorsFree(ids)
    await page.close()
  }, 60_000)

  it('plainText: false sends JSON with Basic auth, which costs a preflight (the contrast)', async () => {
    const { page } = await open('/esm.html')
    // Its own endpoint path, so its preflight is told apart from the CORS-free tests' requests.
    const { ids, result } = await trackAndFlush(page, 'json', 1, { plainText: false, endpoint: `${w.sink.url}/json` })
    expect(result).toEqual({ delivered: 1, failed: 0 })
    const [request] = requestsFor(ids)
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers.authorization).toBe(`Basic ${btoa('browser-key:')}`)
    expect(w.sink.requests.filter((r) => r.method === 'OPTIONS').map((r) => r.path)).toEqual(['/json/v1/batch'])
    await page.close()
  }, 60_000)

  it("localStorage.debug = 'analytics' turns on logging at debug level; without it the console stays quiet", async () => {
    const quiet = await open('/esm.html', ["localStorage.removeItem('debug')"])
    await trackAndFlush(quiet.page, 'quiet', 1)
    expect(quiet.console.filter((line) => line.includes('analytics:client '))).toEqual([])
    await quiet.page.close()

    const loud = await open('/esm.html', ["localStorage.setItem('debug', 'analytics')"])
    const { ids } = await trackAndFlush(loud.page, 'debug', 1)
    await loud.page.evaluate(() => localStorage.removeItem('debug'))
    // Unprefixed lines are console.debug ones (not red in DevTools).
    expect(loud.console.some((line) => line.startsWith(`analytics:client enqueued track ${ids[0]}`)), loud.console.join('\n')).toBe(true)
    expect(loud.console.some((line) => line.startsWith('analytics:client delivered 1 message (200)'))).toBe(true)
    await loud.page.close()
  }, 60_000)

  it('messageIds are v4 UUIDs where crypto.randomUUID is missing (as on an insecure http page)', async () => {
    const { page } = await open('/esm.html', ['delete Crypto.prototype.randomUUID'])
    expect(await page.evaluate(() => typeof crypto.randomUUID)).toBe('undefined')
    const { ids, result } = await trackAndFlush(page, 'uuid', 50)
    expect(result).toEqual({ delivered: 50, failed: 0 })
    for (const id of ids) expect(id).toMatch(UUID_V4)
    expect(new Set(ids).size).toBe(50)
    expect(w.sink.messages().filter((m) => m.event?.startsWith('uuid-')).map((m) => m.messageId).sort()).toEqual([...ids].sort())
    await page.close()
  }, 60_000)
})

describe('Chromium page: browserContext (on by default)', () => {
  it('each message carries the page and the browser under its context; page() fills its properties from the document', async () => {
    const { page } = await open('/esm.html?plan=pro#top')
    const ids = await page.evaluate(async (sink) => {
      const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
      const client = new IA.Client('browser-key', { endpoint: sink, flushAt: 100 })
      const ids = [client.track({ userId: 'browser-user', event: 'context-track' }).messageId, client.page({ userId: 'browser-user', name: 'context-page', properties: { title: 'Mine' } }).messageId]
      await client.close()
      return ids
    }, w.sink.url)
    const [track, viewed] = ids.map((id) => w.sink.messages().find((m) => m.messageId === id)!)
    const url = `${w.pages.url}/esm.html?plan=pro`
    const pageContext = { path: '/esm.html', referrer: '', search: '?plan=pro', title: 'ready', url }
    expect(track!.context).toEqual({
      page: pageContext,
      userAgent: await page.evaluate(() => navigator.userAgent),
      locale: await page.evaluate(() => navigator.language),
      timezone: await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
      screen: await page.evaluate(() => ({ width: screen.width, height: screen.height, density: devicePixelRatio })),
      library: { name: 'isomorphic-analytics', version: expect.any(String) },
    })
    expect(track!.context!.userAgent).toContain('Chrome')
    expect(viewed!.properties).toEqual({ ...pageContext, title: 'Mine' })
    await page.close()
  }, 60_000)
})

describe('Chromium Web Worker', () => {
  it('a module worker importing the bundled package tracks and flushes, CORS-free', async () => {
    const { page, console } = await open('/worker.html')
    const answer = await page.evaluate(
      (sink) =>
        new Promise<Tracked & { isWorker: boolean }>((resolve, reject) => {
          const worker = new Worker('/worker.js', { type: 'module' })
          worker.onmessage = ({ data }) => resolve(data)
          worker.onerror = (e) => reject(new Error(`worker error: ${e.message}`))
          worker.postMessage({ sink })
        }),
      w.sink.url,
    )
    expect(answer.isWorker).toBe(true)
    expect(answer.result, console.join('\n')).toEqual({ delivered: 3, failed: 0 })
    const received = w.sink.messages().filter((m) => m.event?.startsWith('worker-'))
    expect(received.map((m) => m.messageId).sort()).toEqual([...answer.ids].sort())
    expectCorsFree(answer.ids, 'worker-key')
    // browserContext in a worker: the browser's parts, no page (its location is the script's) and no screen.
    for (const m of received) {
      expect(m.context).toMatchObject({ userAgent: expect.stringContaining('Chrome'), locale: expect.any(String), timezone: expect.any(String) })
      expect(m.context!.page).toBeUndefined()
      expect(m.context!.screen).toBeUndefined()
    }
    await page.close()
  }, 60_000)
})
