/**
 * The console in real Chromium with two collector processes (collector-process.mjs, on dist/)
 * sharing a real redis-server: a page on one process finds, by its search, the messages the other
 * accepted (as that process's console shows them, marked "via another collector"); its
 * confirmation of a sync names the members another process's sync left (kept in the server).
 */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedis } from '../helpers/queue-servers.js'
import { onQueueServer, send, startReceiver, type CollectorProcess } from '../collector/durable/support.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'
import { eventually } from './support.js'

const server = onQueueServer(() => startRedis())
let browser: Chromium

beforeAll(async () => {
  browser = await launchChromium()
}, 120_000)

afterAll(async () => {
  await browser?.close()
})

async function signedIn(collector: CollectorProcess): Promise<Page> {
  const page = await browser.context.newPage()
  await page.goto(`${collector.url}/console`)
  await page.getByLabel('Admin token').fill('admin-token-for-tests')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('region', { name: 'Source web' }).waitFor()
  return page
}

const tracks = (users: string[]) => JSON.stringify({
  batch: users.map((userId, i) => ({ type: 'track', event: `Visit ${i}`, userId, anonymousId: `anon-${userId}`, messageId: `visit-${i}-${userId}` })),
})

describe('the console with two collectors on Redis', () => {
  it("searches one process's console for the messages the other accepted", async () => {
    const receiver = await startReceiver(() => 200)
    try {
      const [a, b] = await Promise.all([server.collector({ WEBHOOK: receiver.url }), server.collector({ WEBHOOK: receiver.url })])
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
    } finally {
      await receiver.close()
    }
  }, 60_000)

  it("confirms a sync naming the members another process's sync left", async () => {
    const receiver = await startReceiver(() => 200)
    try {
      const [a, b] = await Promise.all([server.collector({ WEBHOOK: receiver.url }), server.collector({ WEBHOOK: receiver.url })])
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
    } finally {
      await receiver.close()
    }
  }, 60_000)
})
