/**
 * The console's Replay form in real Chromium: a source, a window in local time, failed only or
 * all, one URL or every one; nothing is sent until confirmed (Cancel: "Not sent."), the button is
 * disabled while the request runs, the answer says how many are replaying and how many were no
 * longer kept, a refusal shows the collector's words, and the replay is marked in Live events.
 */
import { describe, expect, it } from 'vitest'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'replay-admin-token-0123456789'
const FIRST = 'https://receiver.test/hook'
const SECOND = 'https://second.test/hook'
let down = true
const calls: Array<{ url: string; body: string }> = []
const under = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: FIRST }, { url: SECOND }] } }],
  adminToken: TOKEN,
  // "Bad" events are refused (400: failed at once) while `down`; the others are delivered.
  fetch: async (url, init) => {
    calls.push({ url: String(url), body: String(init?.body) })
    return new Response('', { status: down && String(init?.body).includes('"event":"Bad"') ? 400 : 200 })
  },
})

/** `ms` from now as a `datetime-local` value, in this machine's time zone (the browser's too). */
const local = (ms: number) => {
  const at = new Date(Date.now() + ms)
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 19)
}

describe('the Replay form', () => {
  it('replays the failed deliveries of a window to one URL once confirmed, says how many, and marks them in Live events', async () => {
    const response = await fetch(`${under.server.url}/v1/batch`, {
      method: 'POST',
      headers: { authorization: `Basic ${btoa('web-key:')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ batch: [{ type: 'track', event: 'Good', userId: 'u1' }, { type: 'track', event: 'Bad', userId: 'u2' }] }),
    })
    expect(response.status).toBe(200)
    await eventually(() => under.collector.stats()).toMatchObject({ pending: 0, failed: 1 })
    const sent = calls.length
    const original = calls.find((c) => c.body.includes('"event":"Bad"'))!.body
    down = false

    const page = await under.signedIn()
    const form = page.getByRole('form', { name: 'Replay a time window' })
    const button = form.getByRole('button', { name: 'Replay' })
    await form.getByLabel('Source').selectOption('web')
    await form.getByLabel('From').fill(local(-3_600_000))
    await form.getByLabel('To').fill(local(3_600_000))
    expect(await form.getByLabel('Deliveries').inputValue()).toBe('failed')
    expect(await form.getByLabel('URL').locator('option').allTextContents()).toEqual(['Every URL', FIRST, SECOND])

    // Cancelled: nothing sent.
    await button.click()
    const dialog = page.getByRole('dialog')
    expect(await dialog.textContent()).toContain('This sends the failed deliveries of "web" accepted from')
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await eventually(() => form.getByRole('status').textContent()).toBe('Not sent.')

    await form.getByLabel('URL').selectOption(SECOND)
    await button.click()
    expect(await dialog.textContent()).toContain(`again, to ${SECOND}`)
    // Disabled while its request runs (here: waiting for the confirmation), so a second click sends nothing more.
    expect(await button.getAttribute('aria-disabled')).toBe('true')
    await dialog.getByRole('button', { name: 'Replay' }).click()
    await eventually(() => form.getByRole('status').textContent()).toBe('Replaying 1; 0 no longer kept. Their deliveries show in Live events, marked "replay".')
    expect(await button.getAttribute('aria-disabled')).toBeNull()
    await eventually(() => calls.length).toBe(sent + 1)
    expect(calls.at(-1)).toEqual({ url: SECOND, body: original })

    const replayed = page.getByRole('listitem', { name: 'track Bad' })
    await eventually(() => replayed.count()).toBe(2)
    await eventually(() => replayed.first().locator('.summary').textContent()).toMatch(/· replay delivered$/)
    expect(await replayed.last().locator('.summary').textContent()).toMatch(/u2 · [^·]+failed$/)

    // A window the wrong way round: the collector's words, next to the form.
    await form.getByLabel('From').fill(local(3_600_000))
    await form.getByLabel('To').fill(local(-3_600_000))
    await button.click()
    await dialog.getByRole('button', { name: 'Replay' }).click()
    await eventually(() => form.getByRole('status').textContent()).toMatch(/^Expected `from` to be no later than `to`/)
    expect(under.pageErrors).toEqual([])
  })
})
