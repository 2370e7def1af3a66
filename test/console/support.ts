/**
 * What the console's tests in real Chromium share: a collector on a loopback port with the
 * config a file gives, a browser, and a page of the console signed in with the admin token.
 */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, expect } from 'vitest'
import { startServer, type Collector, type CollectorConfig, type CollectorServer } from '../../src/collector/index.js'
import { buildCollector, type CollectorHooks } from '../../src/collector/create-collector.js'
import { resolveConfig } from '../../src/collector/config.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'

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
  parts.signedIn = async (name = 'web') => {
    const page = await parts.browser.context.newPage()
    page.on('pageerror', (error) => parts.pageErrors.push(error.message))
    await page.goto(`${parts.server.url}/console`)
    await page.getByLabel('Admin token').fill(config.adminToken)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('region', { name: `Source ${name}` }).waitFor()
    return page
  }
  return parts
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
