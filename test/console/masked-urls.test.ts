/**
 * A webhook URL's credential (`?token=…`, a Slack token in the path) in the console, in real Chromium against a real
 * collector on a loopback port: the settings form and the live view's deliveries show it masked,
 * nowhere in full; saving the form as shown keeps the real URL (deliveries still go to it), and a
 * URL typed with a new credential is shown masked once saved.
 */
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'masked-urls-admin-token-0123456789'
const HOOK = 'https://receiver.test/hook?token=s3cret-console-token'
const SHOWN = 'https://receiver.test/hook?token=…oken'
const SLACK = 'https://hooks.slack.com/services/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'
const SLACK_SHOWN = 'https://hooks.slack.com/services/T024BE7LD/B08KL2M3N4P/…v3Ba'
const ADDED = 'https://added.test/in?api_key=typed-api-key-5678'

/** The URLs the collector POSTed to; each answered 400 (failed at once, so its attempt shows). */
const delivered: string[] = []
const ui = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: HOOK }, { url: SLACK }] } }],
  adminToken: TOKEN,
  fetch: async (input: RequestInfo | URL) => (delivered.push(input instanceof Request ? input.url : String(input)), new Response('no', { status: 400 })),
})

const source = (page: Page) => page.getByRole('region', { name: 'Source web' })

/** Everything the page shows: its text and the values of its fields. */
const everything = (page: Page) => page.evaluate(() =>
  [document.body.innerText, ...[...document.querySelectorAll('input, textarea')].map((f) => (f as HTMLInputElement).value)].join('\n'))

async function send(event: string): Promise<void> {
  const response = await fetch(`${ui.server.url}/v1/track`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa('web-key:')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ event, userId: 'u' }),
  })
  expect(response.status).toBe(200)
}

describe('credentials in webhook URLs, in the console', () => {
  it('are shown masked in the settings and the live view; a save as shown keeps the real URL, a URL typed is masked once saved', async () => {
    const page = await ui.signedIn()
    expect(await source(page).getByLabel('URL 1', { exact: true }).inputValue()).toBe(SHOWN)
    expect(await source(page).getByLabel('URL 2', { exact: true }).inputValue()).toBe(SLACK_SHOWN)

    // The live view: the failed attempt's URL.
    await send('Before')
    const item = page.getByRole('list', { name: 'Messages' }).getByRole('listitem', { name: 'track Before' })
    await eventually(() => item.getAttribute('class')).toContain('failed')
    await item.getByRole('button', { name: 'Details of track Before' }).click()
    const table = item.getByRole('table', { name: 'Deliveries of track Before' })
    await eventually(() => table.getByRole('cell', { name: SHOWN, exact: true }).count()).toBe(1)
    await eventually(() => table.getByRole('cell', { name: SLACK_SHOWN, exact: true }).count()).toBe(1)
    expect(await everything(page)).not.toContain('s3cret')
    expect(await everything(page)).not.toContain('8sEvcrXu9')

    // Saved as shown, with a URL typed: the stored URL is still the real one, the typed one shows masked.
    await source(page).getByRole('button', { name: 'Add URL' }).click()
    await source(page).getByLabel('URL 3', { exact: true }).fill(ADDED)
    await source(page).getByRole('button', { name: 'Save settings' }).click()
    await eventually(() => source(page).getByRole('status').textContent()).toMatch(/^Saved/)
    expect(await source(page).getByLabel('URL 1', { exact: true }).inputValue()).toBe(SHOWN)
    expect(await source(page).getByLabel('URL 2', { exact: true }).inputValue()).toBe(SLACK_SHOWN)
    expect(await source(page).getByLabel('URL 3', { exact: true }).inputValue()).toBe('https://added.test/in?api_key=…5678')
    delivered.length = 0
    await send('After')
    await eventually(() => delivered.slice().sort()).toEqual([ADDED, SLACK, HOOK].sort())
    const text = await everything(page)
    for (const secret of ['s3cret', 'typed-api-key', '8sEvcrXu9']) expect(text).not.toContain(secret)
    await page.close()
    expect(ui.pageErrors).toEqual([])
  })
})
