/**
 * Real Chromium: option `identity` (on by default in pages and browser workers). A page's calls
 * without ids carry an anonymous id kept in localStorage across reloads; `identify()` is
 * remembered across reloads too; `reset()` forgets both; storage `'cookie'` keeps them in
 * first-party cookies; a module worker (no storage) keeps them in memory. (Each rule in Node:
 * test/client/identity.test.ts.)
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { ANONYMOUS_ID_KEY, USER_ID_KEY } from '../../src/client/identity.js'
import { useChromium } from './support/browser.js'
import { UUID_V4 } from './support/sink.js'

const WORKER = `import { Client } from '/bundle/index.js'
self.onmessage = async ({ data }) => {
  const client = new Client('identity-worker', { endpoint: data.sink, flushAt: 100 })
  const sent = [client.track({ event: 'identity-worker-1' }), client.track({ event: 'identity-worker-2' })]
  await client.close()
  self.postMessage({ ids: sent.map((m) => m.messageId), anonymousIds: sent.map((m) => m.anonymousId) })
}`

const w = useChromium({ '/identity-worker.js': WORKER })

async function open(path = '/esm.html'): Promise<Page> {
  const page = await w.browser.context.newPage()
  await page.goto(`${w.pages.url}${path}`)
  await page.waitForFunction(() => document.title === 'ready', undefined, { timeout: 20_000 })
  return page
}

async function reload(page: Page): Promise<void> {
  await page.reload()
  await page.waitForFunction(() => document.title === 'ready', undefined, { timeout: 20_000 })
}

type Step = 'page' | 'track' | 'identify' | 'reset'

/** In the page: a new client (as a page load makes one) runs `steps`; the messageIds of its calls, delivered. */
function run(page: Page, steps: Step[], options: Record<string, unknown> = {}): Promise<string[]> {
  return page.evaluate(async ({ sink, steps, options }) => {
    const IA = (window as unknown as { IA: typeof import('../../src/index.js') }).IA
    const client = new IA.Client('identity-key', { endpoint: sink, flushAt: 100, ...options })
    const ids: string[] = []
    for (const [n, step] of steps.entries()) {
      if (step === 'reset') client.reset()
      else if (step === 'page') ids.push(client.page().messageId)
      else if (step === 'identify') ids.push(client.identify({ userId: 'ada', traits: { plan: 'pro' } }).messageId)
      else ids.push(client.track({ event: `identity-${n}` }).messageId)
    }
    const result = await client.close()
    if (result.delivered !== ids.length) throw new Error(`delivered ${result.delivered} of ${ids.length}`)
    return ids
  }, { sink: w.sink.url, steps, options })
}

/** The ids each message arrived with, in the order of `messageIds`. */
function arrived(messageIds: string[]): Array<{ userId?: string; anonymousId?: string }> {
  return messageIds.map((id) => {
    const m = w.sink.messages().find((m) => m.messageId === id) as { userId?: string; anonymousId?: string } | undefined
    if (!m) throw new Error(`message ${id} did not arrive`)
    return { userId: m.userId, anonymousId: m.anonymousId }
  })
}

describe('Chromium: identity', () => {
  // The ESM page loads dist/index.js; the <script> page, the browser build.
  it.each(['/esm.html', '/iife.html'])('%s, localStorage (the default): one anonymous id across reloads, identify() remembered, reset() forgets both', async (path) => {
    const page = await open(path)
    const [viewed, tracked] = arrived(await run(page, ['page', 'track']))
    const anonymousId = viewed!.anonymousId!
    expect(anonymousId).toMatch(UUID_V4)
    expect(tracked).toEqual({ userId: undefined, anonymousId })
    expect(await page.evaluate((key) => localStorage.getItem(key), ANONYMOUS_ID_KEY)).toBe(anonymousId)

    await reload(page)
    expect(arrived(await run(page, ['track', 'identify', 'track']))).toEqual([
      { userId: undefined, anonymousId },
      { userId: 'ada', anonymousId },
      { userId: 'ada', anonymousId },
    ])

    await reload(page)
    const [known, afterReset] = arrived(await run(page, ['track', 'reset', 'track']))
    expect(known).toEqual({ userId: 'ada', anonymousId })
    expect(afterReset!.userId).toBeUndefined()
    expect(afterReset!.anonymousId).toMatch(UUID_V4)
    expect(afterReset!.anonymousId).not.toBe(anonymousId)
    expect(await page.evaluate((key) => localStorage.getItem(key), USER_ID_KEY)).toBeNull()
    await page.close()
  }, 60_000)

  it("storage 'cookie': the ids live in first-party cookies, across reloads, until reset()", async () => {
    const page = await open()
    const cookie = { identity: { storage: 'cookie' } }
    const [first] = arrived(await run(page, ['identify'], cookie))
    const cookies = async () => Object.fromEntries((await page.context().cookies(w.pages.url)).map((c) => [c.name, c]))
    const jar = await cookies()
    expect(jar[ANONYMOUS_ID_KEY]).toMatchObject({ value: first!.anonymousId, path: '/', sameSite: 'Lax' })
    expect(jar[ANONYMOUS_ID_KEY]!.expires - Date.now() / 1000).toBeGreaterThan(364 * 86_400)
    expect(jar[USER_ID_KEY]).toMatchObject({ value: 'ada' })
    expect(await page.evaluate((key) => localStorage.getItem(key), ANONYMOUS_ID_KEY)).not.toBe(first!.anonymousId)

    await reload(page)
    expect(arrived(await run(page, ['track', 'reset'], cookie))).toEqual([{ userId: 'ada', anonymousId: first!.anonymousId }])
    expect(Object.keys(await cookies())).toEqual([])
    await page.context().clearCookies()
    await page.close()
  }, 60_000)

  it('a module worker (no localStorage or cookies) keeps its anonymous id in memory', async () => {
    const page = await open('/worker.html')
    const answer = await page.evaluate(
      (sink) =>
        new Promise<{ ids: string[]; anonymousIds: string[] }>((resolve, reject) => {
          const worker = new Worker('/identity-worker.js', { type: 'module' })
          worker.onmessage = ({ data }) => resolve(data)
          worker.onerror = (e) => reject(new Error(`worker error: ${e.message}`))
          worker.postMessage({ sink })
        }),
      w.sink.url,
    )
    const [one, two] = arrived(answer.ids)
    expect(one!.anonymousId).toMatch(UUID_V4)
    expect(two).toEqual(one)
    await page.close()
  }, 60_000)
})
