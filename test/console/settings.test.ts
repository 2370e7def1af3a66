/**
 * The console's settings forms in real Chromium, against a real collector on a loopback port: two
 * tabs editing the same source (the stale one is told its change was not saved, and shown the
 * settings as they are now, instead of undoing the other's); a header given twice and a URL
 * without a scheme get the config's own message next to the field (named by its label, as is a
 * header with a control character); the shared secret's line says what it signs; a new save
 * clears the status of the last; header values stay when only the URL changes.
 */
import { describe, expect, it } from 'vitest'
import { changeOnlyTheUrl, configErrorOf, consoleUnderTest, errorOf, eventually, expectSecretExplained, expectUrlErrorByLabel, saveSettings, settingsAt, sourceOf as source, staleSaveRefused } from './support.js'

const TOKEN = 'settings-admin-token-0123456789'
const HOOK = 'https://receiver.test/hook'

const ui = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: HOOK }] } }],
  adminToken: TOKEN,
  fetch: async () => new Response('ok'),
})

const settings = () => settingsAt(ui.server.url, TOKEN)

describe('the settings forms', () => {
  it("two tabs: the stale one does not undo the other's change; it says so, keeps what was typed and lists how it differs from what is saved", async () => {
    const [a, b] = [await ui.signedIn(), await ui.signedIn()]
    // B adds a URL with a credential header, and saves; A, opened before, turns forwarding off:
    // refused, A keeps what was typed and lists how it differs from what B saved.
    await staleSaveRefused(a, b)
    const afterB = { enabled: true, urls: [{ url: HOOK }, { url: 'https://added.test/by-b', headers: { Authorization: '••••9876' } }], sharedSecret: null }
    expect(await settings()).toEqual(afterB)
    // A chooses the saved settings: B's URL and masked header, forwarding on.
    await source(a).getByRole('button', { name: 'Use the saved settings' }).click()
    await eventually(() => source(a).getByLabel('URL 2', { exact: true }).inputValue()).toBe('https://added.test/by-b')
    expect(await source(a).getByLabel('Headers for URL 2').inputValue()).toBe('Authorization: ••••9876')
    expect(await source(a).getByLabel('Forward to webhooks').isChecked()).toBe(true)
    expect(await source(a).getByRole('list', { name: 'Yours and saved' }).isHidden()).toBe(true)

    // Made again on them, A's change is saved, and B's URL and header are kept.
    await source(a).getByLabel('Forward to webhooks').uncheck()
    await saveSettings(a)
    expect(await source(a).locator('.field-error[role=alert]').isHidden()).toBe(true)
    expect(await settings()).toEqual({ ...afterB, enabled: false })
    // And B, now the stale one, is refused in turn.
    await source(b).getByLabel('New shared secret').fill('a-secret-typed-in-b')
    await source(b).getByRole('button', { name: 'Save settings' }).click()
    await eventually(() => source(b).getByRole('alert').textContent()).toContain('your change was not saved')
    // B's typing is kept: forwarding still on as B had it, the secret typed.
    expect(await source(b).getByLabel('Forward to webhooks').isChecked()).toBe(true)
    expect(await source(b).getByLabel('New shared secret').inputValue()).toBe('a-secret-typed-in-b')
    expect(await source(b).getByRole('list', { name: 'Yours and saved' }).getByRole('listitem').allTextContents()).toEqual([
      'Forward to webhooks: yours on, saved off',
      'Shared secret: yours a new one, saved not set',
    ])
    // Saved again, deliberately: B's settings replace A's.
    await saveSettings(b)
    expect(await settings()).toMatchObject({ enabled: true, sharedSecret: expect.stringMatching(/••••/) })
    await Promise.all([a.close(), b.close()])
  })

  it('a header given twice (in any case) is refused with the config\'s message, next to the headers', async () => {
    const page = await ui.signedIn()
    const before = await settings()
    const headers = source(page).getByLabel('Headers for URL 1')
    for (const [text, config] of [
      ['X-Dup: first\nX-Dup: second', { 'x-dup': 'first', 'X-Dup': 'second' }],
      ['X-Key: one\nx-key: two', { 'X-Key': 'one', 'x-key': 'two' }],
    ] as const) {
      const expected = configErrorOf({ urls: [{ url: HOOK, headers: config }] })
      expect(expected).toContain('appears twice in `sources[0].webhooks.urls[0].headers`')
      await headers.fill(text)
      await source(page).getByRole('button', { name: 'Save settings' }).click()
      await eventually(() => errorOf(page, headers)).toBe(expected.replace('`sources[0].webhooks.urls[0].headers`', '"Headers for URL 1"'))
      expect(await source(page).getByRole('status').textContent()).toBe('')
      expect(await settings()).toEqual(before)
    }
    await page.close()
  })

  it('names a header by its name and its field\'s label, never by a config path', async () => {
    const page = await ui.signedIn()
    const before = await settings()
    const headers = source(page).getByLabel('Headers for URL 1')
    await headers.fill('X-Team: a\u0001b')
    await source(page).getByRole('button', { name: 'Save settings' }).click()
    const expected = configErrorOf({ urls: [{ url: HOOK, headers: { 'X-Team': 'a\u0001b' } }] })
    expect(expected).toContain('`sources[0].webhooks.urls[0].headers["X-Team"]`')
    await eventually(() => errorOf(page, headers)).toBe(expected.replace('`sources[0].webhooks.urls[0].headers["X-Team"]`', '"header X-Team in Headers for URL 1"'))
    expect(await settings()).toEqual(before)
    await page.close()
  })

  it('says what the shared secret signs and how a receiver verifies it', async () => {
    const page = await ui.signedIn()
    await expectSecretExplained(page)
    await page.close()
  })

  it("a URL without a scheme gets the config's message next to it (not the browser's), and a new save clears the last status", async () => {
    const page = await ui.signedIn()
    await expectUrlErrorByLabel(page)
    expect((await settings()).urls[0].url).toBe(HOOK)
    await page.close()
    expect(ui.pageErrors).toEqual([])
  })

  it('keeps header values when only the URL changes (within its origin): no retyping', async () => {
    const page = await ui.signedIn()
    await changeOnlyTheUrl(page, HOOK)
    // The value kept is the one typed (a mask is never stored: it would not end in its last four).
    expect((await settings()).urls[0]).toEqual({ url: `${HOOK}/v2`, headers: { 'X-Team': '••••1234' } })
    await source(page).getByLabel('URL 1', { exact: true }).fill(HOOK)
    await source(page).getByLabel('Headers for URL 1').fill('')
    await saveSettings(page)
    expect((await settings()).urls[0]).toEqual({ url: HOOK })
    await page.close()
    expect(ui.pageErrors).toEqual([])
  })
})
