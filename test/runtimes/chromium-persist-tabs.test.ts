/**
 * Real Chromium: `persist` across tabs. A tab's stored messages are taken over by a tab already
 * open when it goes away (opened before it or after), or by the next one to start; two tabs
 * opened at once send each stored message exactly once; a page that takes a list over twice (it
 * was left under two keys) sends it once, also when the second grant comes after the first list was
 * delivered; a closed client takes nothing; quick page views send a
 * message at most twice. The dead endpoint is a loopback port nothing listens on (connection
 * refused), so the page's client keeps retrying. (One page at a time: chromium-persist.test.ts.)
 */
import { describe, expect, it } from 'vitest'
import { usePersistWorld } from './support/persist.js'

const w = usePersistWorld()

/** The ids of `ids` that arrived, sorted, once `count` messages tagged by `pattern` have. */
async function arrived(pattern: RegExp, count: number): Promise<string[]> {
  const matches = (m: { event?: string }) => pattern.test(m.event ?? '')
  await w.sink.waitForMessages(count, 20_000, matches)
  // Give a second sender time to show up, if there were one.
  await new Promise((r) => setTimeout(r, 1500))
  return w.sink.messages().filter(matches).map((m) => m.messageId!).sort()
}

describe('Chromium: persist across tabs', () => {
  it('a tab closed while another is open: the open tab delivers its messages, without a reload', async () => {
    const first = await w.open()
    const left = await w.startClient(first.page, 'persist-open', { endpoint: w.down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'left', 6)
    expect(await w.stored(first.page, 'persist-open', 6)).toHaveLength(6)
    const other = await w.open()
    // One message of its own, held back, so that its key shows it has started (and looked).
    await w.startClient(other.page, 'persist-open', { endpoint: w.sink.url, flushAt: 100, flushAfter: 300 }, 'stayed', 1)
    expect(await w.stored(other.page, 'persist-open', 7)).toHaveLength(7)
    await new Promise((r) => setTimeout(r, 500))
    expect(w.received('left')).toEqual([])
    await first.page.close()
    await w.sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('left-') ?? false)
    await new Promise((r) => setTimeout(r, 500))
    expect(w.received('left').map((m) => m.messageId).sort()).toEqual([...left].sort())
    await other.page.close()
  }, 60_000)

  it('a tab opened after this one, closed with messages stored: this one delivers them, without a reload', async () => {
    const first = await w.open()
    await w.startClient(first.page, 'persist-late', { endpoint: w.sink.url, flushAfter: 100 })
    const later = await w.open()
    const left = await w.startClient(later.page, 'persist-late', { endpoint: w.down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'late', 6)
    expect(await w.stored(later.page, 'persist-late', 6)).toHaveLength(6)
    await later.page.close()
    await w.sink.waitForMessages(6, 20_000, (m) => m.event?.startsWith('late-') ?? false)
    expect(w.received('late').map((m) => m.messageId).sort(), first.console.join('\n')).toEqual([...left].sort())
    await first.page.close()
  }, 60_000)

  /** Lists left by `tabs` closed tabs (`count` messages each), moved under `writeKey` as if all its own: no lock held on any. */
  async function leftLists(writeKey: string, tabs: number, count: number) {
    const ids: string[][] = []
    const lists: Array<[string, string]> = []
    const helper = await w.open()
    // Each on a write key of its own, so that no tab takes another's list over as it closes.
    for (let tab = 1; tab <= tabs; tab++) {
      ids.push(await w.leaveBehind(`${writeKey}-${tab}`, [`${writeKey}${tab}`], count, (page) => page.close()))
      lists.push(...Object.entries(await w.lists(helper.page, `${writeKey}-${tab}`)))
      await w.restore(helper.page, `${writeKey}-${tab}`, {})
    }
    expect(lists).toHaveLength(tabs)
    return { ids, lists, helper }
  }

  it('two tabs opened at once deliver each stored message exactly once', async () => {
    const { ids, lists, helper } = await leftLists('persist-tabs', 3, 8)
    await w.restore(helper.page, 'persist-tabs', Object.fromEntries(lists))
    const tabs = await Promise.all([w.open(), w.open()])
    await Promise.all(tabs.map(({ page }) => w.startClient(page, 'persist-tabs', { endpoint: w.sink.url, flushAfter: 100 })))
    expect(await arrived(/^persist-tabs\d-/, 24)).toEqual(ids.flat().sort())
    for (const { page } of tabs) expect(await w.stored(page, 'persist-tabs', 0)).toEqual([])
    for (const { page } of [...tabs, helper]) await page.close()
  }, 90_000)

  it('a list left under two keys (a tab gone just after taking it over: its own write landed, the removal not) is sent once', async () => {
    const { ids, lists, helper } = await leftLists('persist-twice', 2, 5)
    const [[taken, takenText], [taker, takerText]] = lists
    // The taker's list is its own then the taken one, as it wrote it; the taken list is still there.
    await w.restore(helper.page, 'persist-twice', { [taken]: takenText, [taker]: `${takerText}\n${takenText}` })
    const next = await w.open()
    await w.startClient(next.page, 'persist-twice', { endpoint: w.sink.url, flushAfter: 100 })
    expect(await arrived(/^persist-twice\d-/, 10)).toEqual(ids.flat().sort())
    expect(await w.stored(next.page, 'persist-twice', 0)).toEqual([])
    for (const { page } of [next, helper]) await page.close()
  }, 90_000)

  it('the same, when the second list is granted after the first one\'s messages were delivered: sent once', async () => {
    const { ids, lists, helper } = await leftLists('persist-late-grant', 2, 5)
    const [[taken, takenText], [taker, takerText]] = lists
    await w.restore(helper.page, 'persist-late-grant', { [taken]: takenText, [taker]: `${takerText}\n${takenText}` })
    // The helper holds the taker's lock, as a page still alive would: the next page gets the taken
    // list first, delivers it, and is granted the taker's list only once the helper lets it go.
    await helper.page.evaluate((name) => new Promise<void>((held) => {
      void navigator.locks.request(name, () => new Promise<void>((release) => {
        ;(window as unknown as { release: () => void }).release = release
        held()
      }))
    }), `isomorphic-analytics:persist-late-grant:${taker}`)
    const next = await w.open()
    await w.startClient(next.page, 'persist-late-grant', { endpoint: w.sink.url, flushAfter: 100 })
    expect(await arrived(/^persist-late-grant1-/, 5)).toEqual([...ids[0]].sort())
    await helper.page.evaluate(() => (window as unknown as { release: () => void }).release())
    expect(await arrived(/^persist-late-grant\d-/, 10), next.console.join('\n')).toEqual(ids.flat().sort())
    expect(await w.stored(next.page, 'persist-late-grant', 0)).toEqual([])
    for (const { page } of [next, helper]) await page.close()
  }, 90_000)

  it('tabs closed one after another (each open one taking the closed ones\' lists over): the next page sends each message once', async () => {
    const ids = await w.leaveBehind('persist-chain', ['chain1', 'chain2', 'chain3'], 8, (page) => page.close())
    const next = await w.open()
    await w.startClient(next.page, 'persist-chain', { endpoint: w.sink.url, flushAfter: 100 })
    expect(await arrived(/^chain\d-/, 24), next.console.join('\n')).toEqual([...ids].sort())
    expect(await w.stored(next.page, 'persist-chain', 0)).toEqual([])
    await next.page.close()
  }, 90_000)

  it('a client closed in a page lets the next client on that page take what a closed tab left', async () => {
    const leaving = await w.open()
    const left = await w.startClient(leaving.page, 'persist-reopen', { endpoint: w.down, flushAt: 5, flushAfter: 600_000, minRetryDelay: 200 }, 'reopened', 3)
    expect(await w.stored(leaving.page, 'persist-reopen', 3)).toHaveLength(3)
    const app = await w.open()
    // A single-page app: a client, closed, then another one with the same write key.
    await w.startClient(app.page, 'persist-reopen', { endpoint: w.sink.url, flushAfter: 100 })
    await app.page.evaluate(() => (window as unknown as { client: { close(): Promise<unknown> } }).client.close())
    await w.startClient(app.page, 'persist-reopen', { endpoint: w.sink.url, flushAfter: 100 })
    await leaving.page.close()
    await w.sink.waitForMessages(3, 20_000, (m) => m.event?.startsWith('reopened-') ?? false)
    expect(w.received('reopened').map((m) => m.messageId).sort(), app.console.join('\n')).toEqual([...left].sort())
    await app.page.close()
  }, 60_000)

  it('quick page views: a message stored when its page went away is sent by the next page, not by every later one', async () => {
    const { page } = await w.open()
    const views = 6
    const ids: string[] = []
    for (let view = 0; view < views; view++) {
      if (view > 0) {
        await page.goto(`${w.pagesUrl}/esm.html`)
        await page.waitForFunction(() => document.title === 'ready')
      }
      // The default flushAfter (5 s): each view is left long before its timer would fire.
      ids.push(...(await w.startClient(page, 'persist-views', { endpoint: w.sink.url }, `view${view}`, 1)))
      await new Promise((r) => setTimeout(r, 300))
    }
    await page.evaluate(() => (window as unknown as { client: { flush(): Promise<unknown> } }).client.flush())
    await w.sink.waitForMessages(views, 20_000, (m) => /^view\d-/.test(m.event ?? ''))
    const sent = w.sink.messages().filter((m) => /^view\d-/.test(m.event ?? '')).map((m) => m.messageId)
    expect(new Set(sent)).toEqual(new Set(ids))
    // Sent with keepalive as its page went away, and at most once more by the next page.
    for (const id of ids) expect(sent.filter((s) => s === id).length, id).toBeLessThanOrEqual(2)
    await page.close()
  }, 60_000)

  it('a page whose queue is full when it takes a list over drops that list (reported) and still sends its own on time', async () => {
    await w.leaveBehind('persist-full', ['dropped'], 3, (page) => page.close())
    const next = await w.open()
    // Its two messages fill the queue before the lock of the closed page's list is granted.
    const own = await w.startClient(next.page, 'persist-full', { endpoint: w.sink.url, maxQueueSize: 2, flushAfter: 300 }, 'own', 2)
    await w.sink.waitForMessages(2, 10_000, (m) => m.event?.startsWith('own-') ?? false)
    expect(w.received('own').map((m) => m.messageId).sort(), next.console.join('\n')).toEqual([...own].sort())
    expect(await next.page.evaluate(() => (window as unknown as { client: { stats(): { dropped: number } } }).client.stats().dropped)).toBe(3)
    await next.page.close()
  }, 60_000)
})
