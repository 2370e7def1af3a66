/**
 * The console in real Chromium (Debian's, through playwright-core), driven by role and label
 * against a real collector on a loopback port: a wrong token is refused (and the token is never
 * in a URL); sign in; invalid settings show the config's error next to the field (named by its
 * label) and change nothing; two URLs with a header and a secret, toggled on; events sent by a real `Client` appear
 * live (one event stream) and are delivered signed (the receiver verifies the signature); header
 * values shown masked, kept by a save that leaves them and replaced by a new one; an
 * event named like markup (an `<img onerror>`, a `<script>`) is shown as text and never run; a
 * failing URL shows its retries and is retried by hand; an audience sync and a deletion request,
 * whose payloads' deliveries are shown (a failed deletion retried by hand).
 * The run leaves a screenshot of the console in .tmp/ (and in docs/ with UPDATE_SCREENSHOTS=1).
 */
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '../../src/index.js'
import { createCollector, isConfigError, nodeFetch, startServer, type Collector, type CollectorServer } from '../../src/collector/index.js'
import { verifySignature } from '../../src/webhooks/index.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'
import { eventually } from './support.js'
import { ROOT } from '../runtimes/support/runtimes.js'
import { startServer as startReceiver, type TestServer } from '../webhooks/servers.js'

const TOKEN = 'console-admin-token-0123456789'
const SECRET = 'console-shared-secret-wxyz'
const CREDENTIAL = 'Bearer console-credential-1234'
const XSS = '<img src=x onerror=alert(1)>'
const SCRIPT = '<script>window.pwned = 1; alert(2)</script>'

let browser: Chromium
let collector: Collector
let server: CollectorServer
let good: TestServer
let flaky: TestServer
let page: Page
const dialogs: string[] = []
const pageErrors: string[] = []
const requested: Array<{ url: string; authorization: string | undefined }> = []

beforeAll(async () => {
  good = await startReceiver({ status: 200 })
  flaky = await startReceiver({ status: 200 })
  collector = createCollector({ sources: [{ writeKey: 'console-key', name: 'web' }], adminToken: TOKEN, fetch: nodeFetch, allowPrivateWebhookUrls: true })
  server = await startServer(collector, { port: 0 })
  browser = await launchChromium()
  page = await browser.context.newPage()
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message())
    void dialog.dismiss()
  })
  page.on('pageerror', (error) => pageErrors.push(error.message))
  page.on('request', (request) => requested.push({ url: request.url(), authorization: request.headers().authorization }))
  await page.goto(`${server.url}/console`)
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await server?.close()
  await collector?.close(0)
  await good?.close()
  await flaky?.close()
})

/** The failing URL's retry waits its Retry-After (2 s). */
const source = () => page.getByRole('region', { name: 'Source web' })
const message = (name: string) => page.getByRole('listitem', { name })

async function send(build: (client: Client) => void): Promise<void> {
  const client = new Client('console-key', { endpoint: server.url, flushAt: 100 })
  build(client)
  expect(await client.flush()).toMatchObject({ failed: 0 })
  await client.close()
}

/** The message `createCollector` gives for a source with these `webhooks`. */
function configErrorOf(webhooks: { urls: Array<{ url: string }> }): string {
  try {
    createCollector({ sources: [{ writeKey: 'k', name: 'web', webhooks }] })
  } catch (error) {
    if (isConfigError(error)) return error.message
  }
  throw new Error('expected a ConfigError')
}

async function adminGet(path: string): Promise<unknown> {
  const response = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  return response.json()
}

describe('the console', () => {
  it('refuses a wrong token, then signs in with the right one', async () => {
    await page.getByLabel('Admin token').fill('not-the-token')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await eventually(() => page.getByRole('alert').textContent()).toBe('Wrong admin token.')
    expect(await source().count()).toBe(0)
    await page.getByLabel('Admin token').fill(TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await source().waitFor()
    expect(page.url()).not.toContain(TOKEN)
    await eventually(() => source().getByText(/kept in memory only/).count()).toBe(1)
  })

  it('shows the config error of invalid settings next to the field, and changes nothing', async () => {
    const expected = configErrorOf({ urls: [{ url: 'ftp://example.com/hook' }] })
    expect(expected).toContain('sources[0].webhooks.urls[0].url')
    await source().getByRole('button', { name: 'Add URL' }).click()
    await source().getByLabel('URL 1', { exact: true }).fill('ftp://example.com/hook')
    await source().getByLabel('Forward to webhooks').check()
    await source().getByRole('button', { name: 'Save settings' }).click()
    const field = source().getByLabel('URL 1', { exact: true })
    await eventually(() => field.getAttribute('aria-invalid')).toBe('true')
    const describedBy = await field.getAttribute('aria-describedby')
    // The config's message, naming the field by its label on the page rather than its config path.
    expect(await page.locator(`#${describedBy}`).textContent()).toBe(expected.replace('`sources[0].webhooks.urls[0].url`', '"URL 1"'))
    expect(await adminGet('/v1/admin/sources')).toMatchObject({ sources: [{ name: 'web', webhooks: { enabled: false, urls: [] } }] })

    // Six URLs: the config's error, next to the list of URLs.
    const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://hooks.test/${i}` }))
    const tooMany = configErrorOf({ urls: six })
    expect(tooMany).toContain('sources[0].webhooks.urls')
    for (const [i, { url }] of six.entries()) {
      if (i > 0) await source().getByRole('button', { name: 'Add URL' }).click()
      await source().getByLabel(`URL ${i + 1}`, { exact: true }).fill(url)
    }
    await source().getByRole('button', { name: 'Save settings' }).click()
    await eventually(() => source().locator('.urls[aria-invalid="true"]').count()).toBe(1)
    const listError = await source().locator('.urls').getAttribute('aria-describedby')
    expect(await page.locator(`#${listError}`).textContent()).toBe(tooMany.replace('`sources[0].webhooks.urls`', '"the URLs"'))
    expect(await source().getByLabel('URL 1', { exact: true }).getAttribute('aria-invalid')).toBeNull()
    expect(await adminGet('/v1/admin/sources')).toMatchObject({ sources: [{ name: 'web', webhooks: { enabled: false, urls: [] } }] })
    for (let i = 6; i > 1; i--) await source().getByRole('button', { name: `Remove URL ${i}` }).click()
  })

  it('saves two URLs with a header and a secret; events sent by a Client arrive live and are delivered signed', async () => {
    await source().getByLabel('URL 1', { exact: true }).fill(good.url)
    await source().getByLabel('Headers for URL 1').fill('X-Team: console')
    await source().getByRole('button', { name: 'Add URL' }).click()
    await source().getByLabel('URL 2', { exact: true }).fill(flaky.url)
    await source().getByLabel('New shared secret').fill(SECRET)
    await source().getByRole('button', { name: 'Save settings' }).click()
    await eventually(() => source().getByRole('status').textContent()).toMatch(/^Saved/)
    expect(await source().getByText('••••wxyz').count()).toBe(1)
    expect(await source().getByLabel('URL 1', { exact: true }).getAttribute('aria-invalid')).toBeNull()

    await send((client) => {
      client.identify({ userId: 'ada', traits: { plan: 'pro' } })
      client.track({ userId: 'ada', event: 'Signed Up', properties: { via: 'console test' } })
      client.track({ userId: 'ada', event: XSS })
    })
    await message('track Signed Up').waitFor()
    await eventually(() => message('track Signed Up').textContent()).toContain('delivered')
    // Live: one event stream, the token in its header (never in a URL), no polling.
    const admin = requested.filter((r) => new URL(r.url).pathname.startsWith('/v1/admin/messages'))
    expect(admin.map((r) => new URL(r.url).pathname)).toEqual(['/v1/admin/messages/stream'])
    expect(admin[0].authorization).toBe(`Bearer ${TOKEN}`)
    expect(requested.filter((r) => r.url.includes(TOKEN))).toEqual([])
    // Newest first.
    const names = await page.getByRole('list', { name: 'Messages' }).getByRole('listitem').evaluateAll((items) => items.map((i) => i.getAttribute('aria-label')))
    expect(names).toEqual([`track ${XSS}`, 'track Signed Up', 'identify'])

    await message('track Signed Up').getByRole('button', { name: 'Details of track Signed Up' }).click()
    const table = page.getByRole('table', { name: 'Deliveries of track Signed Up' })
    await eventually(() => table.getByRole('row').filter({ hasText: good.url }).textContent()).toContain('200')
    const raw = JSON.parse((await page.getByLabel('Raw JSON of track Signed Up').textContent())!)
    expect(raw).toMatchObject({ type: 'track', event: 'Signed Up', userId: 'ada', properties: { via: 'console test' } })

    const received = good.requests.filter((r) => JSON.parse(r.raw.toString()).event === 'Signed Up')
    expect(received).toHaveLength(1)
    expect(received[0].headers['x-team']).toBe('console')
    expect(await verifySignature(received[0].raw, String(received[0].headers['x-signature']), SECRET)).toBe(true)

    // Filters: by type, then by event name.
    await page.getByLabel('Type').selectOption('identify')
    await eventually(() => page.getByRole('list', { name: 'Messages' }).getByRole('listitem').count()).toBe(1)
    await page.getByLabel('Type').selectOption('')
    await page.getByLabel('Event name').fill('signed')
    await eventually(() => page.getByRole('list', { name: 'Messages' }).getByRole('listitem').count()).toBe(1)
    await page.getByLabel('Event name').fill('')
  })

  it('shows an event named like markup as text, never as markup', async () => {
    const item = message(`track ${XSS}`)
    await item.waitFor()
    expect(await item.locator('.name').textContent()).toBe(XSS)
    expect(await page.locator('main img').count()).toBe(0)

    await send((client) => client.track({ userId: 'eve', event: SCRIPT }))
    const scripted = message(`track ${SCRIPT}`)
    await scripted.waitFor()
    expect(await scripted.locator('.name').textContent()).toBe(SCRIPT)
    await scripted.getByRole('button', { name: `Details of track ${SCRIPT}` }).click()
    expect(JSON.parse((await page.getByLabel(`Raw JSON of track ${SCRIPT}`).textContent())!)).toMatchObject({ event: SCRIPT })
    expect(await page.locator('main script').count()).toBe(0)
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined()
    await scripted.getByRole('button', { name: `Details of track ${SCRIPT}` }).click()
    expect(dialogs).toEqual([])
  })

  it('shows header values masked; a save that leaves them keeps them, and a new value replaces one', async () => {
    const headers = source().getByLabel('Headers for URL 1')
    const save = async () => {
      const put = page.waitForResponse((r) => r.request().method() === 'PUT')
      await source().getByRole('button', { name: 'Save settings' }).click()
      expect((await put).status()).toBe(200)
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save settings')
    }
    const received = async (event: string) => {
      await send((client) => client.track({ userId: 'kim', event }))
      await eventually(() => good.requests.filter((r) => JSON.parse(r.raw.toString()).event === event).length).toBe(1)
      return good.requests.find((r) => JSON.parse(r.raw.toString()).event === event)!.headers
    }
    // The value typed in an earlier test is shown masked since it was saved.
    expect(await headers.inputValue()).toBe('X-Team: ••••')
    await headers.fill(`X-Team: ••••\nAuthorization: ${CREDENTIAL}`)
    await save()
    await eventually(() => headers.inputValue()).toBe('X-Team: ••••\nAuthorization: ••••1234')
    expect(JSON.stringify(await adminGet('/v1/admin/sources'))).not.toContain('credential')
    await save()
    expect(await received('Headers Kept')).toMatchObject({ 'x-team': 'console', authorization: CREDENTIAL })

    await headers.fill('X-Team: replaced\nAuthorization: ••••1234')
    await save()
    await eventually(() => headers.inputValue()).toBe('X-Team: ••••\nAuthorization: ••••1234')
    expect(await received('Header Replaced')).toMatchObject({ 'x-team': 'replaced', authorization: CREDENTIAL })
  })

  it('shows the retries of a failing URL, and retries a failed delivery by hand', async () => {
    await source().getByRole('button', { name: 'Remove URL 1' }).click()
    await source().getByRole('button', { name: 'Save settings' }).click()
    await eventually(() => adminGet('/v1/admin/sources')).toMatchObject({ sources: [{ webhooks: { urls: [{ url: flaky.url }] } }] })
    flaky.replies.push({ status: 503, headers: { 'retry-after': '2' } }, { status: 400, body: 'no thanks' })
    await send((client) => client.track({ userId: 'bob', event: 'Will Fail' }))
    const item = message('track Will Fail')
    // While it waits (the receiver's Retry-After: 2 s), its next retry is shown.
    await eventually(() => item.locator('.outcome').textContent()).toBe('retrying')
    expect(await item.locator('.summary').textContent()).toMatch(/next retry \d/)
    await eventually(() => item.locator('.outcome').textContent()).toBe('failed')
    await item.getByRole('button', { name: 'Details of track Will Fail' }).click()
    const rows = page.getByRole('table', { name: 'Deliveries of track Will Fail' }).getByRole('row')
    await eventually(() => rows.allTextContents()).toEqual([
      expect.stringContaining('Attempt'),
      expect.stringMatching(/^1.*503/),
      expect.stringMatching(/^2.*400/),
    ])
    await item.getByRole('button', { name: 'Retry delivery of track Will Fail' }).click()
    await eventually(() => item.locator('.outcome').textContent()).toBe('delivered')
    await eventually(() => rows.count()).toBe(4)
    expect(await rows.nth(3).textContent()).toMatch(/^3.*200/)
    expect(flaky.requests.filter((r) => JSON.parse(r.raw.toString()).event === 'Will Fail')).toHaveLength(3)
    await eventually(() => page.getByText(/^\d+ failed$/).textContent()).toBe('1 failed')
  })

  it("triggers an audience sync and a deletion request, and shows their deliveries: a deletion's failure, retried by hand", async () => {
    const audience = page.getByRole('form', { name: 'Audience sync' })
    await audience.getByLabel('Audience').fill('Power Users')
    await audience.getByLabel('Members').fill('ada\nbob')
    await audience.getByRole('button', { name: 'Sync audience' }).click()
    await eventually(() => audience.getByRole('status').textContent()).toBe('Sent 2 payload(s) to web. Deliveries are followed in Live events. Show audience syncs in Live events')
    await audience.getByRole('button', { name: 'Show audience syncs in Live events' }).click()
    expect(await page.getByLabel('Type').inputValue()).toBe('audience')
    const items = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    await eventually(() => items.evaluateAll((all) => all.map((i) => i.getAttribute('aria-label')))).toEqual(['identify Power Users bob', 'identify Power Users ada'])
    await eventually(() => message('identify Power Users ada').textContent()).toMatch(/audience sync.*delivered/)

    // The receiver refuses the deletion (400: failed for good); the page shows it, and its retry by hand delivers it.
    await eventually(() => flaky.requests.filter((r) => JSON.parse(r.raw.toString()).traits?.power_users === true).length).toBe(2)
    flaky.replies.push({ status: 400, body: 'not now' })
    const deletion = page.getByRole('form', { name: 'Deletion request' })
    await deletion.getByLabel('User id').fill('ada')
    await deletion.getByRole('button', { name: 'Request deletion' }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete user "ada"' }).click()
    await eventually(() => deletion.getByRole('status').textContent()).toBe('Sent 1 payload(s) to web. Deliveries are followed in Live events. Show deletion requests in Live events')
    await deletion.getByRole('button', { name: 'Show deletion requests in Live events' }).click()
    const erased = message('delete ada')
    await eventually(() => erased.locator('.outcome').textContent()).toBe('failed')
    expect(await erased.locator('.summary').textContent()).toContain('deletion request')
    await eventually(() => items.count()).toBe(1)
    await erased.getByRole('button', { name: 'Details of delete ada' }).click()
    const rows = page.getByRole('table', { name: 'Deliveries of delete ada' }).getByRole('row')
    await eventually(() => rows.allTextContents()).toEqual([expect.stringContaining('Attempt'), expect.stringMatching(/^1.*400/)])
    await erased.getByRole('button', { name: 'Retry delivery of delete ada' }).click()
    await eventually(() => erased.locator('.outcome').textContent()).toBe('delivered')
    await eventually(() => rows.allTextContents()).toEqual([expect.stringContaining('Attempt'), expect.stringMatching(/^1.*400/), expect.stringMatching(/^2.*200/)])
    expect(flaky.requests.filter((r) => JSON.parse(r.raw.toString()).type === 'delete')).toHaveLength(2)
    await page.getByLabel('Type').selectOption('')

    const shot = join(ROOT, '.tmp', 'console.png')
    mkdirSync(join(ROOT, '.tmp'), { recursive: true })
    await page.screenshot({ path: shot, fullPage: true })
    if (process.env.UPDATE_SCREENSHOTS === '1') copyFileSync(shot, join(ROOT, 'docs', 'console.png'))
    expect(pageErrors).toEqual([])
  })
})
