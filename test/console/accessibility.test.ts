/**
 * The console for keyboard and screen-reader users, and on a phone, in real Chromium against a
 * real collector on a loopback port: focus after sign-in and after "Remove URL", the skip link to
 * the messages, sign-out (back to the sign-in form, the event stream aborted), axe-core's check of the signed-in page (no serious or critical
 * violation; 120 messages listed, so "Show more" among them), and the audience and deletion forms stacked at 390 px wide.
 */
import { describe, expect, it } from 'vitest'
import { consoleUnderTest, expectFocusAfterRemoveUrl, expectFocusAfterSignIn, expectSignOut, expectStackedAt390, seriousViolations } from './support.js'

const TOKEN = 'a11y-admin-token-0123456789'

const ui = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: 'https://one.test/hook' }, { url: 'https://two.test/hook' }] } }],
  adminToken: TOKEN,
  fetch: async () => new Response('ok'),
})

describe('console accessibility', () => {
  it('moves focus to the main heading after sign-in, whose next stop is the skip link to the messages', async () => {
    const page = await ui.signedIn()
    await expectFocusAfterSignIn(page)
    await page.close()
  })

  it('moves focus to the previous URL field, or to "Add URL", after "Remove URL"', async () => {
    const page = await ui.signedIn()
    await expectFocusAfterRemoveUrl(page)
    expect(ui.pageErrors).toEqual([])
    await page.close()
  })

  it('signs out: back to the sign-in form, its event stream ended, the token forgotten', async () => {
    const page = await ui.signedIn()
    await expectSignOut(page)
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
    expect(await seriousViolations(page)).toEqual([])
    await page.close()
  })

  it('stacks the audience and deletion forms at 390 px wide', async () => {
    const page = await ui.signedIn()
    await expectStackedAt390(page)
    await page.close()
  })
})
