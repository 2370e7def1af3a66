/**
 * The console in real Chromium with two collector processes (collector-process.mjs, on dist/)
 * sharing a real redis-server: a page on one process finds, by its search, the messages the other
 * accepted (as that process's console shows them, marked "via another collector"); it shows
 * each URL's outcome of an attempt the other made, and the payload as forwarded; a failure in a
 * burst past the follow bound is listed and retried by hand; its confirmation of a sync names the
 * members another process's sync left (kept in the server). The settings forms, the chart,
 * axe-core's check, the layout at 390 px and sign-out with two collectors: queue-server-forms.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { startRedis } from '../helpers/queue-servers.js'
import { onQueueServer, send, startReceiver } from '../collector/durable/support.js'
import { consoleOfProcesses, eventually, expectAcceptedByUrl2, showAll, withTwoCollectors } from './support.js'

const server = onQueueServer(() => startRedis())
const { signedIn } = consoleOfProcesses()

const tracks = (users: string[]) => JSON.stringify({
  batch: users.map((userId, i) => ({ type: 'track', event: `Visit ${i}`, userId, anonymousId: `anon-${userId}`, messageId: `visit-${i}-${userId}` })),
})

describe('the console with two collectors on Redis', () => {
  it("searches one process's console for the messages the other accepted", () => withTwoCollectors(server, async (a, b) => {
    const page = await signedIn(b)
    expect(await send(a.url, tracks(['ada', 'bob', 'ada', 'cy']))).toBe(200)
    const items = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    await eventually(() => items.count()).toBe(4)
    await page.getByLabel('User ID', { exact: true }).fill('ada')
    await eventually(() => items.evaluateAll((li) => li.map((i) => i.getAttribute('aria-label')))).toEqual(['track Visit 2', 'track Visit 0'])
    const status = page.getByRole('search', { name: 'Search messages' }).getByRole('status')
    await eventually(() => status.textContent()).toBe('The collector holds 2 messages matching exactly.')
    await page.getByLabel('Outcome').selectOption('delivered')
    await eventually(() => items.first().locator('.outcome').textContent()).toBe('delivered')
    await eventually(() => items.count()).toBe(2)
    expect(await items.first().textContent()).toContain('ada · anonymous anon-ada')
    expect(await items.first().textContent()).toContain('via another collector')
    await page.close()
  }), 60_000)

  it("shows, on one process, each URL's outcome of an attempt another process made, and the payload as forwarded", async () => {
    const refusing = await startReceiver(() => 500)
    // Answers after URL 1 has: its 500 is heard first or late, the words end the same.
    const accepting = await startReceiver(() => 200, () => 50)
    try {
      const env = { WEBHOOK: refusing.url, WEBHOOK2: accepting.url }
      const [a, b] = await Promise.all([server.collector(env), server.collector(env)])
      const page = await signedIn(b)
      expect(await send(a.url, tracks(['dee']))).toBe(200)
      await expectAcceptedByUrl2(page, 'track Visit 0')
      const rows = page.getByRole('table', { name: 'Deliveries of track Visit 0' }).getByRole('row')
      expect((await rows.nth(1).getByRole('cell').allTextContents()).slice(4, 6)).toEqual([expect.stringMatching(/^500/), expect.stringMatching(/^\d+ ms$/)])
      expect((await rows.nth(2).getByRole('cell').allTextContents()).slice(4, 6)).toEqual(['200', expect.stringMatching(/^\d+ ms$/)])
      await eventually(() => page.getByLabel('Payload as forwarded of track Visit 0').textContent()).toBe(accepting.accepted[0].raw)
      await page.close()
    } finally {
      await refusing.close()
      await accepting.close()
    }
  }, 60_000)

  it('lists a failure in a burst past 100 messages a second, retries it by hand, and says how many successes it left out', async () => {
    // Visit 140's first attempt is refused for good; every other attempt is accepted.
    let refused = 0
    const receiver = await startReceiver((p) => (p.messageId === 'visit-140-burst' && refused++ === 0 ? 400 : 200))
    try {
      const [a, b] = await Promise.all([server.collector({ WEBHOOK: receiver.url }), server.collector({ WEBHOOK: receiver.url })])
      const page = await signedIn(b)
      const users = Array.from({ length: 150 }, () => 'burst')
      expect(await send(a.url, tracks(users))).toBe(200)
      const item = page.getByRole('listitem', { name: 'track Visit 140' })
      await eventually(() => item.locator('.outcome').textContent()).toBe('failed')
      // Every message is listed or counted: the bound (100 a second, per process) thinned out successes only.
      const items = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
      const unlisted = async () => Number((await page.locator('.unlisted').textContent())?.match(/^(\d+) successful deliveries not listed: past 100 messages a second/)?.[1] ?? 0)
      await eventually(async () => (await showAll(page), await items.count()) + (await unlisted())).toBe(150)
      expect(await unlisted()).toBeGreaterThan(0)
      await item.getByRole('button', { name: 'Retry delivery of track Visit 140' }).click()
      await eventually(() => item.locator('.outcome').textContent()).toBe('delivered')
      expect(receiver.accepted.filter((p) => p.messageId === 'visit-140-burst')).toHaveLength(1)
      // The chart counts across processes: every delivery, listed or not, made by either process.
      await eventually(() => page.locator('.totals').textContent()).toMatch(/^150 delivered\d+ retrying1 failed$/)
      await page.close()
    } finally {
      await receiver.close()
    }
  }, 60_000)

  it("confirms a sync naming the members another process's sync left", () => withTwoCollectors(server, async (a, b) => {
    const synced = await fetch(`${a.url}/v1/audiences`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token-for-tests', 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'web', audience: 'Power Users', members: ['ada', 'bob', 'cy'] }),
    })
    expect(synced.status).toBe(200)
    const page = await signedIn(b)
    const form = page.getByRole('form', { name: 'Audience sync' })
    await form.getByLabel('Audience').fill('Power Users')
    await form.getByLabel('Members').fill('cy')
    await form.getByRole('button', { name: 'Sync audience' }).click()
    expect(await page.getByRole('dialog').getByRole('paragraph').textContent()).toBe('This sync removes 2 members of "Power Users" ("ada" and "bob").')
    await page.getByRole('dialog').getByRole('button', { name: 'Remove 2 members' }).click()
    await eventually(() => form.getByRole('status').textContent()).toMatch(/^Sent 2 payload\(s\) to web\./)
    await page.close()
  }), 60_000)
})
