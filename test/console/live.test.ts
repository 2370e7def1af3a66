/**
 * The console's live view in real Chromium under traffic: a burst larger than one stream event is
 * listed whole; keyboard focus stays on its record's button while other records arrive; a refused
 * retry's error stays while live updates come; after the collector restarts (same port), the list
 * shows exactly what the new process has, not a mix of old and new records; after a restart with
 * another admin token, the page signs out and stops calling the collector. An integer beyond 2^53
 * in a message shows in its raw JSON digit for digit, and a 20,000-character event name wraps.
 */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCollector, startServer, type Collector, type CollectorServer } from '../../src/collector/index.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'
import { eventually, showAll } from './support.js'

const TOKEN = 'live-admin-token-0123456789'

let browser: Chromium
let collector: Collector
let server: CollectorServer
let port = 0
let page: Page

/** "web" forwards to a receiver that refuses everything (400: failed at once); "app" forwards nothing. */
async function start(adminToken = TOKEN): Promise<void> {
  collector = createCollector({
    sources: [
      { writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: 'https://receiver.test/hook' }] } },
      { writeKey: 'app-key', name: 'app' },
    ],
    adminToken,
    fetch: async () => new Response('no thanks', { status: 400 }),
  })
  server = await startServer(collector, { port })
  port = Number(new URL(server.url).port)
}

async function stop(): Promise<void> {
  await server?.close()
  await collector?.close(0)
}

beforeAll(async () => {
  await start()
  browser = await launchChromium()
  page = await browser.context.newPage()
  await page.goto(`${server.url}/console`)
  await page.getByLabel('Admin token').fill(TOKEN)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('region', { name: 'Source web' }).waitFor()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await stop()
})

const items = () => page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
const labels = () => items().evaluateAll((li) => li.map((i) => i.getAttribute('aria-label')))

async function send(key: string, batch: object[]): Promise<void> {
  const response = await fetch(`${server.url}/v1/batch`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa(`${key}:`)}`, 'content-type': 'application/json' },
    body: JSON.stringify({ batch }),
  })
  expect(response.status).toBe(200)
}

const tracks = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ type: 'track', event: `${prefix} ${i}`, userId: 'u', messageId: `${prefix}-${i}-${Math.random()}` }))

describe('the live view', () => {
  it('lists a burst larger than one stream event whole (150 identify, then 150 track)', async () => {
    const identify = Array.from({ length: 150 }, (_, i) => ({ type: 'identify', userId: `burst-${i}`, messageId: `identify-${i}` }))
    await send('app-key', [...identify, ...tracks('Burst', 150)])
    await eventually(() => items().first().getAttribute('aria-label')).toBe('track Burst 149')
    await page.getByLabel('Type').selectOption('identify')
    // The newest 50 are shown, and the rest two clicks away.
    await eventually(() => items().count()).toBe(50)
    expect(await page.locator('.more').textContent()).toBe('Showing the newest 50 of 150. Show 50 more messages')
    await showAll(page)
    await eventually(() => items().count()).toBe(150)
    expect(await items().last().getAttribute('aria-label')).toBe('identify')
    await page.getByLabel('Type').selectOption('')
  })

  it("keeps keyboard focus on a record's button while other records arrive", async () => {
    const details = page.getByRole('button', { name: 'Details of track Burst 149' })
    await details.focus()
    await send('app-key', tracks('Focus', 1))
    await eventually(() => items().first().getAttribute('aria-label')).toBe('track Focus 0')
    const focused = () => page.evaluate(() => (document.activeElement?.tagName === 'BUTTON' ? document.activeElement.textContent : document.activeElement?.tagName))
    expect(await focused()).toBe('Details of track Burst 149')
    await page.keyboard.press('Enter')
    await page.getByLabel('Raw JSON of track Burst 149').waitFor()
    // Opening the details rebuilds that item: focus moves to its new button.
    expect(await focused()).toBe('Details of track Burst 149')
    await page.keyboard.press('Enter')
  })

  it("keeps a refused retry's error while live updates come", async () => {
    await send('web-key', tracks('Will Fail', 1))
    const failed = page.getByRole('listitem', { name: 'track Will Fail 0' })
    await eventually(() => failed.locator('.outcome').textContent()).toBe('failed')
    const off = await fetch(`${server.url}/v1/admin/sources/web/webhooks`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(off.status).toBe(200)
    await failed.getByRole('button', { name: 'Retry delivery of track Will Fail 0' }).click()
    const refused = page.getByRole('alert').filter({ hasText: 'turn it on to retry' })
    await refused.waitFor()
    for (let i = 0; i < 3; i++) {
      await send('app-key', tracks(`Update ${i}`, 1))
      await eventually(() => items().first().getAttribute('aria-label')).toBe(`track Update ${i} 0`)
    }
    expect(await refused.isVisible()).toBe(true)
  })

  it('shows integers beyond 2^53 in the raw JSON digit for digit, as the collector received them', async () => {
    // Written by hand: JSON.stringify cannot write these numbers.
    const body = '{"batch":[{"type":"track","event":"Int64","userId":"u","messageId":"int64-1","properties":'
      + '{"orderId":9223372036854775807,"refund":-9223372036854775808,"ids":[9007199254740993,42],"price":0.1}}]}'
    const response = await fetch(`${server.url}/v1/batch`, { method: 'POST', headers: { authorization: `Basic ${btoa('app-key:')}` }, body })
    expect(response.status).toBe(200)
    const item = page.getByRole('listitem', { name: 'track Int64' })
    await item.getByRole('button', { name: 'Details of track Int64' }).click()
    const raw = await item.getByLabel('Raw JSON of track Int64').textContent()
    // The numbers as the page shows them (Node 20's JSON.parse has no source text to read them with).
    const numbers = (text: string | null) => text?.match(/-?\d[\d.]*(?=,?\n)/g)
    const sent = ['9223372036854775807', '-9223372036854775808', '9007199254740993', '42', '0.1']
    expect(numbers(raw)).toEqual(sent)
    await item.getByRole('button', { name: 'Details of track Int64' }).click()

    // A browser without JSON.parse source text access (and so without JSON.rawJSON, shipped with
    // it) shows them rounded, as JSON.parse does, and nothing else changes.
    const older = await browser.context.newPage()
    await older.addInitScript(() => delete (JSON as { rawJSON?: unknown }).rawJSON)
    await older.goto(`${server.url}/console`)
    await older.getByLabel('Admin token').fill(TOKEN)
    await older.getByRole('button', { name: 'Sign in' }).click()
    const olderItem = older.getByRole('listitem', { name: 'track Int64' })
    await olderItem.getByRole('button', { name: 'Details of track Int64' }).click()
    expect(numbers(await olderItem.getByLabel('Raw JSON of track Int64').textContent())).toEqual(sent.map((n) => String(Number(n))))
    await older.close()
  })

  it('wraps a 20,000-character event name, in the list and in its details, within the page width', async () => {
    const on = await fetch(`${server.url}/v1/admin/sources/web/webhooks`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    })
    expect(on.status).toBe(200)
    const name = 'A'.repeat(20_000)
    await send('web-key', [{ type: 'track', event: name, userId: 'u', messageId: 'long-name' }])
    // CSS, not roles: an accessible name of 20,000 characters is slow to match.
    const item = page.locator('ol.messages > li').first()
    await eventually(() => item.locator('.name').textContent()).toBe(name)
    await eventually(() => item.locator('.outcome').textContent()).toBe('failed')
    await item.locator('[data-action="details"]').click()
    await item.locator('table.attempts caption').waitFor()
    const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth])
    expect(width[0]).toBeLessThanOrEqual(width[1])
  })

  it('after a restart, shows exactly what the new process has', async () => {
    const before = await fetch(`${server.url}/v1/admin/messages?limit=1`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const { version } = (await before.json()) as { version: number }
    await stop()
    await start()
    // Sent before the page reconnects (a second after the stream ended), and more of them than
    // the old process's version: the new process's versions pass the page's old cursor.
    const count = version + 20
    await send('app-key', tracks('After restart', count))
    // The newest 500 (what the page lists at most, as the collector's record holds), all shown.
    const expected = Array.from({ length: Math.min(count, 500) }, (_, i) => `track After restart ${count - 1 - i}`)
    await eventually(async () => (await showAll(page), labels())).toEqual(expected)
  })

  it('after a restart with another admin token, signs out with a message and stops calling the collector', async () => {
    // Its own page, on a fake clock: the stream's reconnection and the chart's refresh are timers.
    const watched = await browser.context.newPage()
    await watched.clock.install()
    await watched.goto(`${server.url}/console`)
    await watched.getByLabel('Admin token').fill(TOKEN)
    await watched.getByRole('button', { name: 'Sign in' }).click()
    await watched.getByRole('region', { name: 'Source web' }).waitFor()
    const requested: string[] = []
    watched.on('request', (request) => requested.push(new URL(request.url()).pathname))
    await stop()
    await start('rotated-admin-token-ABCDEFGHIJ')
    // The stream ended: a second later, the page follows it again, and is refused.
    await eventually(async () => {
      await watched.clock.runFor(1000)
      return watched.getByLabel('Admin token').count()
    }).toBe(1)
    expect(await watched.getByRole('alert').textContent()).toBe('Signed out: the collector no longer accepts this admin token (restarted with another one?). Sign in again.')
    expect(await watched.getByRole('region', { name: 'Source web' }).count()).toBe(0)
    const signedOut = requested.length
    await watched.clock.runFor(60_000)
    expect(requested.slice(signedOut)).toEqual([])
    // The new token signs in.
    await watched.getByLabel('Admin token').fill('rotated-admin-token-ABCDEFGHIJ')
    await watched.getByRole('button', { name: 'Sign in' }).click()
    await watched.getByRole('region', { name: 'Source web' }).waitFor()
    await watched.close()
  })
})
