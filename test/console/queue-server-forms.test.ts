/**
 * The console's forms and page in real Chromium with two collector processes (collector-process.mjs,
 * on dist/) sharing a real redis-server, the steps of the tests in memory mode (./support.ts):
 * a page on process A, stale after a page on process B saved the settings, is refused (409), keeps
 * what was typed and lists how it differs from what B saved; an error is shown next to the field
 * by its label; header values stay when only the URL changes (and process A applies that); the
 * chart of A counts the deliveries B made; axe-core finds no serious or critical violation on a
 * page listing messages the other process accepted; the layout stacks at 390 px; sign-out; focus
 * after sign-in and after "Remove URL", the skip link, and the shared secret's explanation.
 */
import { describe, expect, it } from 'vitest'
import { startRedis } from '../helpers/queue-servers.js'
import { onQueueServer, send, startReceiver } from '../collector/durable/support.js'
import {
  changeOnlyTheUrl, consoleOfProcesses, eventually, expectFocusAfterRemoveUrl, expectFocusAfterSignIn, expectSecretExplained, expectSignOut,
  expectStackedAt390, expectUrlErrorByLabel, saveSettings, seriousViolations,
  settingsAt, sourceOf, staleSaveRefused, withTwoCollectors,
} from './support.js'

const server = onQueueServer(() => startRedis())
const ui = consoleOfProcesses()
const TOKEN = 'admin-token-for-tests'

const tracks = (from: number, count: number) => JSON.stringify({
  batch: Array.from({ length: count }, (_, i) => ({ type: 'track', event: `Visit ${from + i}`, userId: 'ada', messageId: `visit-${from + i}` })),
})

describe('the console with two collectors on Redis: settings, chart, accessibility, layout', () => {
  it("refuses a page on A that is stale after a save on B; A keeps what was typed, lists the difference, then saves on B's settings", () => withTwoCollectors(server, async (a, b, receiver) => {
    const [pageA, pageB] = [await ui.signedIn(a), await ui.signedIn(b)]
    await staleSaveRefused(pageA, pageB)
    const afterB = { enabled: true, urls: [{ url: receiver.url }, { url: 'https://added.test/by-b', headers: { Authorization: '••••9876' } }], sharedSecret: '••••cret' }
    // Both processes hold B's settings: A's refused save changed nothing anywhere.
    expect(await settingsAt(b.url, TOKEN)).toEqual(afterB)
    await eventually(() => settingsAt(a.url, TOKEN)).toEqual(afterB)
    // A takes the saved settings and makes its change on them: saved, and B's process applies it.
    await sourceOf(pageA).getByRole('button', { name: 'Use the saved settings' }).click()
    await eventually(() => sourceOf(pageA).getByLabel('URL 2', { exact: true }).inputValue()).toBe('https://added.test/by-b')
    await sourceOf(pageA).getByLabel('Forward to webhooks').uncheck()
    await saveSettings(pageA)
    await eventually(() => settingsAt(b.url, TOKEN)).toEqual({ ...afterB, enabled: false })
    expect(ui.pageErrors).toEqual([])
    await Promise.all([pageA.close(), pageB.close()])
  }), 60_000)

  it('names a wrong URL by its label on A; keeps the headers when B changes only the URL, and A applies it', () => withTwoCollectors(server, async (a, b, receiver) => {
    const pageA = await ui.signedIn(a)
    await expectUrlErrorByLabel(pageA)
    expect((await settingsAt(a.url, TOKEN)).urls).toEqual([{ url: receiver.url }])
    const pageB = await ui.signedIn(b)
    await changeOnlyTheUrl(pageB, receiver.url)
    // The value kept is the one typed on B (a mask is never stored), in both processes.
    const kept = [{ url: `${receiver.url}/v2`, headers: { 'X-Team': '••••1234' } }]
    expect((await settingsAt(b.url, TOKEN)).urls).toEqual(kept)
    await eventually(async () => (await settingsAt(a.url, TOKEN)).urls).toEqual(kept)
    expect(ui.pageErrors).toEqual([])
    await Promise.all([pageA.close(), pageB.close()])
  }), 60_000)

  it("counts in A's chart the deliveries B made", async () => {
    // Each process delivers with its own configuration: what B delivered, B's receiver got. A's
    // receiver answers slowly, so that B takes some of the jobs.
    const slow = await startReceiver(() => 200, () => 300)
    const fast = await startReceiver(() => 200)
    try {
      const [a, b] = await Promise.all([server.collector({ WEBHOOK: slow.url }), server.collector({ WEBHOOK: fast.url })])
      const page = await ui.signedIn(a)
      for (let i = 0; i < 12; i++) expect(await send(i % 2 ? b.url : a.url, tracks(i, 1))).toBe(200)
      await eventually(() => slow.accepted.length + fast.accepted.length).toBe(12)
      expect(fast.accepted.length).toBeGreaterThan(0)
      await eventually(() => page.locator('.totals').textContent()).toBe('12 delivered0 retrying0 failed')
      // The bars say the same (each bar's title: "<time>: <n> delivered").
      const titles = page.getByRole('img', { name: 'Deliveries per minute, last hour' }).locator('rect.delivered title')
      const delivered = await titles.evaluateAll((ts) => ts.map((t) => Number(/: (\d+) delivered$/.exec(t.textContent ?? '')?.[1] ?? NaN)))
      expect(delivered.reduce((n, d) => n + d, 0)).toBe(12)
      await page.close()
    } finally {
      await slow.close()
      await fast.close()
    }
  }, 60_000)

  it('has no serious or critical axe-core violation on a page listing what the other process accepted; stacks at 390 px; signs out', () => withTwoCollectors(server, async (a, b) => {
    const page = await ui.signedIn(a)
    // More messages than the live view shows at first (within the 100 a second each process follows).
    expect(await send(b.url, tracks(0, 80))).toBe(200)
    await page.getByRole('button', { name: 'Show 30 more messages' }).waitFor()
    expect(await page.getByRole('list', { name: 'Messages' }).getByRole('listitem').first().textContent()).toContain('via another collector')
    expect(await seriousViolations(page)).toEqual([])
    await expectStackedAt390(page)
    await expectSignOut(page)
    expect(ui.pageErrors).toEqual([])
    await page.close()
  }), 60_000)

  it('moves focus for keyboard users (after sign-in, the skip link, after "Remove URL") and explains the shared secret, on a page of B', () => withTwoCollectors(server, async (_a, b) => {
    const page = await ui.signedIn(b)
    await expectFocusAfterSignIn(page)
    await expectSecretExplained(page)
    await sourceOf(page).getByRole('button', { name: 'Add URL' }).click()
    await expectFocusAfterRemoveUrl(page)
    expect(ui.pageErrors).toEqual([])
    await page.close()
  }), 60_000)
})
