/**
 * The console for keyboard and screen-reader users, and on a phone, in real Chromium against a
 * real collector on a loopback port: focus after sign-in and after "Remove URL", the skip link to
 * the messages, sign-out (back to the sign-in form, the event stream aborted), axe-core's check of the signed-in page (no serious or critical
 * violation; 120 messages listed, so "Show more" among them), and the audience and deletion forms stacked at 390 px wide.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'a11y-admin-token-0123456789'
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const ui = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: 'https://one.test/hook' }, { url: 'https://two.test/hook' }] } }],
  adminToken: TOKEN,
  fetch: async () => new Response('ok'),
})

/** The accessible name (or text) of the focused element. */
const focused = (page: Page) => page.evaluate(() => {
  const element = document.activeElement as HTMLElement | null
  return element?.id && document.querySelector(`label[for="${element.id}"]`)?.textContent || element?.textContent || ''
})

describe('console accessibility', () => {
  it('moves focus to the main heading after sign-in, whose next stop is the skip link to the messages', async () => {
    const page = await ui.signedIn()
    await eventually(() => focused(page)).toBe('Sources and the Webhooks destination')
    await page.keyboard.press('Tab')
    expect(await focused(page)).toBe('Skip to messages')
    await expect.poll(() => page.getByRole('link', { name: 'Skip to messages' }).isVisible()).toBe(true)
    await page.keyboard.press('Enter')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Messages')
    await page.close()
  })

  it('moves focus to the previous URL field, or to "Add URL", after "Remove URL"', async () => {
    const page = await ui.signedIn()
    await page.getByRole('button', { name: 'Remove URL 2' }).click()
    expect(await focused(page)).toBe('URL 1')
    await page.getByRole('button', { name: 'Remove URL 1' }).click()
    expect(await focused(page)).toBe('Add URL')
    expect(ui.pageErrors).toEqual([])
    await page.close()
  })

  it('signs out: back to the sign-in form, its event stream ended, the token forgotten', async () => {
    const page = await ui.signedIn()
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
    await page.close()
  })

  it('has no serious or critical axe-core violation on the signed-in page', async () => {
    // More messages than the live view shows at first: its "Show 50 more messages" is checked too.
    const sent = await fetch(`${ui.server.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa('web-key:')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ batch: Array.from({ length: 120 }, (_, i) => ({ type: 'track', event: `Event ${i}`, userId: 'ada' })) }),
    })
    expect(sent.status).toBe(200)
    const page = await ui.signedIn()
    await page.getByRole('button', { name: 'Show 50 more messages' }).waitFor()
    // The page's Content-Security-Policy (`script-src 'self'`) refuses an inline <script> (so
    // page.addScriptTag), as it should: axe-core is evaluated through the DevTools protocol instead.
    await page.evaluate(AXE)
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }> } }).axe
      return (await axe.run()).violations.map(({ id, impact, nodes }) => ({ id, impact, targets: nodes.map((n) => n.target.join(' ')) }))
    })
    expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([])
    await page.close()
  })

  it('stacks the audience and deletion forms at 390 px wide', async () => {
    const page = await ui.signedIn()
    await page.setViewportSize({ width: 390, height: 844 })
    const audience = (await page.getByRole('form', { name: 'Audience sync' }).boundingBox())!
    const deletion = (await page.getByRole('form', { name: 'Deletion request' }).boundingBox())!
    expect(deletion.y).toBeGreaterThanOrEqual(audience.y + audience.height)
    expect(audience.width).toBeGreaterThan(300)
    expect(deletion.width).toBeGreaterThan(300)
    // The page is not wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
    await page.close()
  })
})
