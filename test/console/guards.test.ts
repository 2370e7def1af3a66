/**
 * The console's destructive actions in real Chromium: a sync that removes members and one with an
 * empty Members box, and a deletion request, are sent only once confirmed, in words naming what
 * they do ("removes all 3 members of …"); cancelled, nothing is sent. A button is disabled while
 * its request runs, and a double click sends once (a sync, a deletion, a retry, a save).
 */
import type { Page, Request } from 'playwright-core'
import { beforeAll, describe, expect, it } from 'vitest'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'guards-admin-token-0123456789'
/** What the receiver got: each payload's JSON. */
const received: Array<Record<string, any>> = []
let refuse = false
const under = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: 'https://receiver.test/hook' }] } }, { writeKey: 'app-key', name: 'app' }],
  adminToken: TOKEN,
  fetch: async (_url, init) => {
    received.push(JSON.parse(String(init?.body)))
    return new Response('', { status: refuse ? 400 : 200 })
  },
})

let page: Page
/** The page's requests to the collector: `METHOD /path`. */
const requests: string[] = []
const sent = (what: string) => requests.filter((r) => r === what).length

beforeAll(async () => {
  page = await under.signedIn()
  page.on('request', (request: Request) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`))
})

const audience = () => page.getByRole('form', { name: 'Audience sync' })
const deletion = () => page.getByRole('form', { name: 'Deletion request' })
const dialog = () => page.getByRole('dialog')
const members = (audienceName: string, value: boolean) => received.filter((p) => p.type === 'identify' && p.traits?.[audienceName] === value).map((p) => p.userId).sort()

async function sync(list: string): Promise<void> {
  await audience().getByLabel('Members').fill(list)
  await audience().getByRole('button', { name: 'Sync audience' }).click()
}

describe('destructive actions', () => {
  it('a sync that removes members is confirmed naming them; an empty Members box is refused unless confirmed', async () => {
    await audience().getByLabel('Audience').fill('Power Users')
    // Adding only: sent at once, and a double click sends once.
    await audience().getByLabel('Members').fill('ada\nbob\ncy')
    await audience().getByRole('button', { name: 'Sync audience' }).dblclick()
    await eventually(() => audience().getByRole('status').textContent()).toMatch(/^Sent 3 payload\(s\) to web\./)
    expect(sent('POST /v1/audiences')).toBe(1)
    expect(await dialog().count()).toBe(0)

    // Empty: the dialog names every member removed. Cancelled, nothing is sent.
    await sync('')
    expect(await dialog().getByRole('paragraph').textContent()).toBe('The Members box is empty: this sync removes all 3 members of "Power Users" ("ada", "bob" and "cy").')
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel')
    await dialog().getByRole('button', { name: 'Cancel' }).click()
    await eventually(() => audience().getByRole('status').textContent()).toBe('Not sent.')
    expect(sent('POST /v1/audiences')).toBe(1)
    // Escape cancels too.
    await sync('')
    await dialog().waitFor()
    await page.keyboard.press('Escape')
    await eventually(() => dialog().count()).toBe(0)
    expect(sent('POST /v1/audiences')).toBe(1)

    // Some removed, some added: both said; confirmed, sent.
    await sync('cy\ndan')
    expect(await dialog().getByRole('paragraph').textContent()).toBe('This sync removes 2 members of "Power Users" ("ada" and "bob") and adds 1.')
    await dialog().getByRole('button', { name: 'Remove 2 members' }).click()
    await eventually(() => audience().getByRole('status').textContent()).toMatch(/^Sent 3 payload\(s\) to web\./)
    await eventually(() => members('power_users', false)).toEqual(['ada', 'bob'])

    // Empty, confirmed: every member removed.
    await sync('')
    await dialog().getByRole('button', { name: 'Remove all 2 members' }).click()
    await eventually(() => audience().getByRole('status').textContent()).toMatch(/^Sent 2 payload\(s\) to web\./)
    await eventually(() => members('power_users', false)).toEqual(['ada', 'bob', 'cy', 'dan'])
    // An audience never synced, empty: still asked.
    await audience().getByLabel('Audience').fill('Nobody Yet')
    await sync('')
    expect(await dialog().getByRole('paragraph').textContent()).toBe('The Members box is empty: this sync sends nothing, and "Nobody Yet" is remembered as empty.')
    await dialog().getByRole('button', { name: 'Cancel' }).click()
  })

  it('a deletion request is confirmed naming the sources whose receivers delete; disabled while it runs, sent once', async () => {
    await deletion().getByLabel('User id').fill('ada')
    await deletion().getByRole('button', { name: 'Request deletion' }).click()
    expect(await dialog().getByRole('paragraph').textContent()).toBe('This asks the webhook receivers of "web" to delete everything they hold about user "ada". It cannot be undone.')
    await dialog().getByRole('button', { name: 'Cancel' }).click()
    await eventually(() => deletion().getByRole('status').textContent()).toBe('Not sent.')
    expect(sent('POST /v1/deletions')).toBe(0)

    // While the request runs (held here until released), the button is disabled.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    await page.route('**/v1/deletions', async (route) => {
      await held
      await route.continue()
    })
    // A double click opens one confirmation (the second click lands on it).
    await deletion().getByRole('button', { name: 'Request deletion' }).dblclick()
    await eventually(() => dialog().count()).toBe(1)
    await dialog().getByRole('button', { name: 'Delete user "ada"' }).click()
    await eventually(() => sent('POST /v1/deletions')).toBe(1)
    expect(await deletion().getByRole('button', { name: 'Request deletion' }).getAttribute('aria-disabled')).toBe('true')
    // Pressed again meanwhile (clicked, or Enter in the field): nothing (no dialog, no request).
    await deletion().getByRole('button', { name: 'Request deletion' }).click({ force: true })
    await deletion().getByLabel('User id').press('Enter')
    expect(await dialog().count()).toBe(0)
    release()
    await eventually(() => deletion().getByRole('status').textContent()).toMatch(/^Sent 1 payload\(s\) to web\./)
    expect(await deletion().getByRole('button', { name: 'Request deletion' }).getAttribute('aria-disabled')).toBeNull()
    expect(sent('POST /v1/deletions')).toBe(1)
    await page.unroute('**/v1/deletions')
  })

  it('a double click on a retry or on saving settings sends once', async () => {
    refuse = true
    const response = await fetch(`${under.server.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa('web-key:')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ batch: [{ type: 'track', event: 'Twice', userId: 'u', messageId: 'twice' }] }),
    })
    expect(response.status).toBe(200)
    const item = page.getByRole('listitem', { name: 'track Twice' })
    await eventually(() => item.locator('.outcome').textContent()).toBe('failed')
    refuse = false
    await item.getByRole('button', { name: 'Retry delivery of track Twice' }).dblclick()
    await eventually(() => item.locator('.outcome').textContent()).toBe('delivered')
    expect(requests.filter((r) => r.endsWith('/retry'))).toHaveLength(1)

    await page.getByRole('region', { name: 'Source web' }).getByRole('button', { name: 'Save settings' }).dblclick()
    await eventually(() => page.getByRole('region', { name: 'Source web' }).getByRole('status').textContent()).toMatch(/^Saved/)
    expect(sent('PUT /v1/admin/sources/web/webhooks')).toBe(1)
    expect(under.pageErrors).toEqual([])
  })
})
