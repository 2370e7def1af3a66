/**
 * What the console's tests in real Chromium share: a collector on a loopback port with the
 * config a file gives (or collector processes, test/collector/durable/support.ts), a browser, a
 * page of the console signed in with the admin token, and the steps that the tests in memory mode
 * and with two collectors on a queue server both take (the settings forms, sign-out, axe-core,
 * the layout at 390 px).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { createCollector, isConfigError, startServer, type Collector, type CollectorConfig, type CollectorServer } from '../../src/collector/index.js'
import { buildCollector, type CollectorHooks } from '../../src/collector/create-collector.js'
import { resolveConfig } from '../../src/collector/config.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'
import { startReceiver, type CollectorProcess } from '../collector/durable/support.js'

export interface ConsoleUnderTest {
  readonly browser: Chromium
  readonly collector: Collector
  readonly server: CollectorServer
  /** What the console's pages threw (a test expects none). */
  readonly pageErrors: string[]
  /** A new page of the console, signed in, once source `name` is shown. */
  signedIn(name?: string): Promise<Page>
}

/**
 * Starts the collector (`config`, whose `adminToken` the pages sign in with) and Chromium for the
 * file's tests; stops them after. `prepare` runs first (receivers whose URLs `config` names, filled
 * in then) and returns what stops what it started. `hooks`: the collector's (an injected clock).
 */
export function consoleUnderTest(config: CollectorConfig & { adminToken: string }, prepare?: () => Promise<() => Promise<void>>, hooks: CollectorHooks = {}): ConsoleUnderTest {
  const parts = { pageErrors: [] as string[] } as { -readonly [K in keyof ConsoleUnderTest]: ConsoleUnderTest[K] }
  let cleanUp: (() => Promise<void>) | undefined
  beforeAll(async () => {
    cleanUp = await prepare?.()
    parts.collector = buildCollector(resolveConfig(config), hooks)
    parts.server = await startServer(parts.collector, { port: 0 })
    parts.browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await parts.browser?.close()
    await parts.server?.close()
    await parts.collector?.close(0)
    await cleanUp?.()
  })
  parts.signedIn = (name = 'web') => signIn(parts.browser, parts.server.url, config.adminToken, parts.pageErrors, name)
  return parts
}

/** A new page of the console of the collector at `url`, signed in with `token`, once source `name` is shown; what it throws goes to `pageErrors`. */
async function signIn(browser: Chromium, url: string, token: string, pageErrors: string[], name: string): Promise<Page> {
  const page = await browser.context.newPage()
  page.on('pageerror', (error) => pageErrors.push(error.message))
  await page.goto(`${url}/console`)
  await page.getByLabel('Admin token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('region', { name: `Source ${name}` }).waitFor()
  return page
}

/**
 * Chromium for a file's tests of collector processes (test/collector/durable/support.ts, whose
 * admin token the pages sign in with): `signedIn(collector)` opens that process's console.
 */
export function consoleOfProcesses(): { readonly pageErrors: string[]; signedIn(collector: { url: string }): Promise<Page> } {
  let browser: Chromium | undefined
  const pageErrors: string[] = []
  beforeAll(async () => {
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
  })
  return { pageErrors, signedIn: (collector) => signIn(browser!, collector.url, 'admin-token-for-tests', pageErrors, 'web') }
}

/**
 * Runs `test` with a receiver accepting every payload and two collector processes of `server`
 * (`onQueueServer`'s) delivering to it; closes the receiver after.
 */
export async function withTwoCollectors(
  server: { collector(env: Record<string, string>): Promise<CollectorProcess> },
  test: (a: CollectorProcess, b: CollectorProcess, receiver: Awaited<ReturnType<typeof startReceiver>>) => Promise<void>,
): Promise<void> {
  const receiver = await startReceiver(() => 200)
  try {
    const [a, b] = await Promise.all([server.collector({ WEBHOOK: receiver.url }), server.collector({ WEBHOOK: receiver.url })])
    await test(a, b, receiver)
  } finally {
    await receiver.close()
  }
}

/** Clicks "Show N more messages" under the live view's list until every listed message is shown. */
export async function showAll(page: Page): Promise<void> {
  const more = page.getByRole('button', { name: /^Show \d+ more messages?$/ })
  while (await more.isVisible()) await more.click()
}

/** Polls `read` until its expectation holds (10 s at most). */
export const eventually = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 100 })

/**
 * Waits until record `label` is delivered, opens its details, and expects its one attempt in
 * words: URL 2 accepted it, URL 1's 500 is not retried (heard first or late, the words end so).
 */
export async function expectAcceptedByUrl2(page: Page, label: string): Promise<void> {
  const item = page.getByRole('listitem', { name: label })
  await eventually(() => item.locator('.outcome').textContent()).toBe('delivered')
  await item.getByRole('button', { name: `Details of ${label}` }).click()
  const words = page.getByRole('group', { name: `Attempts of ${label} in words` }).getByRole('paragraph')
  await eventually(() => words.allTextContents()).toEqual([
    expect.stringMatching(/^Attempt 1 at .*: accepted by URL 2 \(200\); URL 1 answered 500 and is not retried: the first URL to accept a message ends its delivery\.$/),
  ])
}

/** Source `name`'s part of the page: its settings form. */
export const sourceOf = (page: Page, name = 'web') => page.getByRole('region', { name: `Source ${name}` })

export interface SavedSettings {
  enabled: boolean
  urls: Array<{ url: string; headers?: Record<string, string> }>
  sharedSecret: string | null
}

/** Source web's settings as the admin API of the collector at `url` gives them (masked). */
export async function settingsAt(url: string, token: string): Promise<SavedSettings> {
  const response = await fetch(`${url}/v1/admin/sources/web/webhooks`, { headers: { authorization: `Bearer ${token}` } })
  return ((await response.json()) as { source: { webhooks: SavedSettings } }).source.webhooks
}

/** Clicks "Save settings" and waits until the page says they were saved. */
export async function saveSettings(page: Page): Promise<void> {
  await sourceOf(page).getByRole('button', { name: 'Save settings' }).click()
  await eventually(() => sourceOf(page).getByRole('status').textContent()).toMatch(/^Saved/)
}

/** The message `createCollector` gives for a source with these `webhooks`. */
export function configErrorOf(webhooks: { urls: Array<{ url: string; headers?: Record<string, string> }> }): string {
  try {
    createCollector({ sources: [{ writeKey: 'k', name: 'web', webhooks }] })
  } catch (error) {
    if (isConfigError(error)) return error.message
  }
  throw new Error('expected a ConfigError')
}

/** The text of the error that `field` is described by. */
export async function errorOf(page: Page, field: Locator): Promise<string | null> {
  if ((await field.getAttribute('aria-invalid')) !== 'true') return null
  return page.locator(`#${await field.getAttribute('aria-describedby')}`).textContent()
}

/**
 * Two pages that read source web's settings (URL 1 only): `b` adds URL 2 with a credential header
 * and saves; then `a`, stale, turns forwarding off and saves: refused (409), it says its change
 * was not saved, keeps what was typed and lists how it differs from what `b` saved.
 */
export async function staleSaveRefused(a: Page, b: Page): Promise<void> {
  await sourceOf(b).getByRole('button', { name: 'Add URL' }).click()
  await sourceOf(b).getByLabel('URL 2', { exact: true }).fill('https://added.test/by-b')
  await sourceOf(b).getByLabel('Headers for URL 2').fill('Authorization: Bearer b-credential-9876')
  await saveSettings(b)
  await sourceOf(a).getByLabel('Forward to webhooks').uncheck()
  const answer = a.waitForResponse((r) => r.url().endsWith('/v1/admin/sources/web/webhooks') && r.request().method() === 'PUT')
  await sourceOf(a).getByRole('button', { name: 'Save settings' }).click()
  expect((await answer).status()).toBe(409)
  const alert = sourceOf(a).getByRole('alert')
  await eventually(() => alert.textContent()).toContain('changed elsewhere')
  expect(await alert.textContent()).toContain('your change was not saved')
  expect(await sourceOf(a).getByRole('status').textContent()).toBe('')
  expect(await sourceOf(a).getByLabel('Forward to webhooks').isChecked()).toBe(false)
  expect(await sourceOf(a).getByLabel('URL 2', { exact: true }).count()).toBe(0)
  await eventually(() => sourceOf(a).getByRole('list', { name: 'Yours and saved' }).getByRole('listitem').allTextContents()).toEqual([
    'Forward to webhooks: yours off, saved on',
    'URL 2: not in yours, saved "https://added.test/by-b"',
  ])
}

/**
 * After a save, URL 1 given without a scheme is refused with the config's message next to it,
 * named by its label (not the browser's message, not a config path); the last "Saved" is cleared.
 */
export async function expectUrlErrorByLabel(page: Page): Promise<void> {
  await saveSettings(page)
  const url = sourceOf(page).getByLabel('URL 1', { exact: true })
  await url.fill('receiver.test/hook')
  await sourceOf(page).getByRole('button', { name: 'Save settings' }).click()
  const expected = configErrorOf({ urls: [{ url: 'receiver.test/hook' }] })
  expect(expected).toContain('sources[0].webhooks.urls[0].url')
  await eventually(() => errorOf(page, url)).toBe(expected.replace('`sources[0].webhooks.urls[0].url`', '"URL 1"'))
  expect(await sourceOf(page).getByRole('status').textContent()).toBe('')
}

/**
 * Headers typed for URL 1 (`hook`) and saved, shown masked; then only the URL changed within its
 * origin (`${hook}/v2`) and saved, the headers not typed again. What is saved is the caller's to check.
 */
export async function changeOnlyTheUrl(page: Page, hook: string): Promise<void> {
  const headers = sourceOf(page).getByLabel('Headers for URL 1')
  await headers.fill('X-Team: team-credential-1234')
  await saveSettings(page)
  expect(await headers.inputValue()).toBe('X-Team: ••••1234')
  await sourceOf(page).getByLabel('URL 1', { exact: true }).fill(`${hook}/v2`)
  await saveSettings(page)
}

/** The accessible name (or text) of the focused element. */
export const focused = (page: Page) => page.evaluate(() => {
  const element = document.activeElement as HTMLElement | null
  return element?.id && document.querySelector(`label[for="${element.id}"]`)?.textContent || element?.textContent || ''
})

/** After sign-in, focus is on the main heading; its next stop is the skip link, which leads to the messages. */
export async function expectFocusAfterSignIn(page: Page): Promise<void> {
  await eventually(() => focused(page)).toBe('Sources and the Webhooks destination')
  await page.keyboard.press('Tab')
  expect(await focused(page)).toBe('Skip to messages')
  await expect.poll(() => page.getByRole('link', { name: 'Skip to messages' }).isVisible()).toBe(true)
  await page.keyboard.press('Enter')
  expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Messages')
}

/** With two URLs on the form: removing URL 2 focuses URL 1; removing URL 1 then focuses "Add URL". */
export async function expectFocusAfterRemoveUrl(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Remove URL 2' }).click()
  expect(await focused(page)).toBe('URL 1')
  await page.getByRole('button', { name: 'Remove URL 1' }).click()
  expect(await focused(page)).toBe('Add URL')
}

/** The shared secret's line says what it signs and how a receiver verifies it. */
export async function expectSecretExplained(page: Page): Promise<void> {
  const help = sourceOf(page).getByText(/X-Signature/)
  expect(await help.textContent()).toMatch(/hex HMAC-SHA1 of the raw request body.*verifySignature from isomorphic-analytics\/webhooks/)
}

/** Signs out: back to the sign-in form (focused, empty), the event stream ended; a wrong token is then refused. */
export async function expectSignOut(page: Page): Promise<void> {
  const streamEnded = page.waitForEvent('requestfailed', (request) => request.url().includes('/v1/admin/messages/stream'))
  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('form', { name: 'Sign in' }).waitFor()
  await streamEnded
  expect(await page.getByLabel('Admin token').inputValue()).toBe('')
  expect(await focused(page)).toBe('Admin token')
  expect(await page.getByRole('region', { name: 'Source web' }).count()).toBe(0)
  // Signing in again needs the token typed again: a wrong one is refused.
  await page.getByLabel('Admin token').fill('not-the-token')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await eventually(() => page.getByRole('alert').first().textContent()).toBe('Wrong admin token.')
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on `page`, each with the elements it names. */
export async function seriousViolations(page: Page): Promise<Array<{ id: string; impact: string; targets: string[] }>> {
  // The page's Content-Security-Policy (`script-src 'self'`) refuses an inline <script> (so
  // page.addScriptTag), as it should: axe-core is evaluated through the DevTools protocol instead.
  await page.evaluate(AXE)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe
    return (await axe.run()).violations.map(({ id, impact, nodes }) => ({ id, impact, targets: nodes.map((n) => n.target.join(' ')) }))
  })
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}

/** At 390 px wide: the deletion form under the audience form, each nearly the screen's width, nothing wider than the screen. */
export async function expectStackedAt390(page: Page): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 })
  const audience = (await page.getByRole('form', { name: 'Audience sync' }).boundingBox())!
  const deletion = (await page.getByRole('form', { name: 'Deletion request' }).boundingBox())!
  expect(deletion.y).toBeGreaterThanOrEqual(audience.y + audience.height)
  expect(audience.width).toBeGreaterThan(300)
  expect(deletion.width).toBeGreaterThan(300)
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
}
