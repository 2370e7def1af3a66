/**
 * Endpoint health in real Chromium: a badge per URL, a banner for a disabled URL with "Enable"
 * (confirmed first; cancelled, nothing is sent) and the choice to re-send what it missed, which
 * then reaches the receiver. The collector's health clock is injected: the day of failures that
 * disables the URL passes at once.
 */
import type { Page, Request } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { until } from '../helpers/until.js'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'health-admin-token-0123456789'
const HOOK = 'https://receiver.test/hook'
const clock = { now: Date.parse('2026-11-29T00:00:00.000Z') }
const received: string[] = []
let status = 503
const under = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: HOOK }], retryWindow: 0 } }],
  adminToken: TOKEN,
  onError: () => {},
  fetch: async (_url, init) => {
    if (status === 200) received.push(String((JSON.parse(String(init?.body)) as { messageId: string }).messageId))
    return new Response('', { status })
  },
}, undefined, { now: () => clock.now })

let page: Page
const requests: string[] = []

async function send(messageId: string): Promise<void> {
  const { failed } = under.collector.stats()
  const response = await under.collector.fetch(new Request('http://collector.test/v1/batch', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('web-key:')}` },
    body: JSON.stringify({ batch: [{ type: 'track', event: 'Signed Up', userId: 'u1', messageId }] }),
  }))
  expect(response.status).toBe(200)
  await until(() => under.collector.stats().failed === failed + 1, `${messageId} failed`)
}

beforeAll(async () => {
  // A day of nothing but failures (the clock moved, not waited for), then a message not sent.
  await send('m-1')
  clock.now += 86_400_000
  await send('m-2')
  await send('m-3')
  page = await under.signedIn()
  page.on('request', (request: Request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`))
}, 60_000)

describe('endpoint health in the console', () => {
  it('badge and banner for a disabled URL; Enable is confirmed, sent once, and re-sends what it missed', async () => {
    // The first failure was a day ago: out of the hour's counts, still in the streak.
    const urls = page.getByRole('list', { name: 'Webhook URLs' })
    await eventually(() => urls.getByRole('listitem').allTextContents()).toEqual([
      expect.stringMatching(/^Disabled web: https:\/\/receiver\.test\/hook \(1 attempt, 1 failed in the last hour; 2 failures in a row\) Last error: .*503/),
    ])
    const banner = page.getByRole('alert').filter({ hasText: 'is disabled' })
    expect(await banner.getByRole('paragraph').first().textContent()).toMatch(/^Webhook URL https:\/\/receiver\.test\/hook of source web is disabled since .*: every attempt to it failed for too long\. Nothing is sent to it; its messages are kept as failed\.$/)
    const enable = banner.getByRole('button', { name: `Enable ${HOOK}` })
    const replay = banner.getByLabel('Re-send the messages it missed while disabled')
    expect(await replay.isChecked()).toBe(true)

    // Cancelled: nothing is sent.
    await enable.click()
    const dialog = page.getByRole('dialog')
    expect(await dialog.getByRole('paragraph').textContent()).toBe(`This sends again to ${HOOK} (source web) and re-sends the messages it missed while disabled.`)
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await eventually(() => dialog.count()).toBe(0)
    expect(requests.filter((r) => r === 'POST /v1/admin/endpoints/enable')).toEqual([])

    // Confirmed: one request; the button is disabled while it runs; the missed message arrives.
    status = 200
    await enable.click()
    expect(await enable.getAttribute('aria-disabled')).toBe('true')
    await dialog.getByRole('button', { name: 'Enable' }).click()
    await eventually(() => page.locator('p.status').filter({ hasText: 'enabled' }).textContent()).toBe(`${HOOK} enabled. 1 missed message re-sent.`)
    expect(requests.filter((r) => r === 'POST /v1/admin/endpoints/enable')).toHaveLength(1)
    await eventually(() => received).toEqual(['m-3'])
    await eventually(() => banner.count()).toBe(0)
    await eventually(() => urls.getByRole('listitem').first().textContent()).toMatch(/^Healthy web: https:\/\/receiver\.test\/hook \(2 attempts, 1 failed in the last hour\)$/)
    expect(under.pageErrors).toEqual([])
  })
})
