/**
 * Static header values in the console's settings endpoints: shown masked like the shared secret,
 * and a masked value sent back (as shown) keeps the value it stands for (also when its URL changed
 * within its origin, at the same place); a masked value that
 * stands for nothing held is refused and never becomes a value.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SettingsStore, SourceWebhooksConfig, WebhookUrlConfig } from '../../../src/collector/index.js'
import { verifySignature } from '../../../src/webhooks/index.js'
import { KEY, post, track, until } from '../helpers.js'
import { SECRET, admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

const BEARER = 'Bearer token-abcdef-1234'
const BACKUP_KEY = 'backup-key-000-5678'
const HOOKS: WebhookUrlConfig[] = [
  { url: 'https://hooks.test/in', headers: { Authorization: BEARER, 'X-Team': 'web' } },
  { url: 'https://backup.test/in', headers: { 'X-Key': BACKUP_KEY } },
]
const SHOWN: WebhookUrlConfig[] = [
  { url: 'https://hooks.test/in', headers: { Authorization: '••••1234', 'X-Team': '••••' } },
  { url: 'https://backup.test/in', headers: { 'X-Key': '••••5678' } },
]

/** A collector whose `web` source sends two URLs static headers, with a store recording each save. */
function withHeaders() {
  const saved: Array<[string, SourceWebhooksConfig]> = []
  const settings: SettingsStore = { kind: 'file', durable: true, save: async (...args) => (saved.push(args), true) }
  const sources = [{ writeKey: KEY, name: 'web', webhooks: { urls: HOOKS, sharedSecret: SECRET } }, { writeKey: 'OTHER', name: 'app' }]
  return { ...consoleCollector({ sources, settings }), saved }
}

const put = (body: unknown) => admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body })

describe('static header values in the settings endpoints', () => {
  it('GET and PUT show each header value masked (its last four characters at most), never in full', async () => {
    const { collector } = withHeaders()
    const { body } = await json(collector, admin('/v1/admin/sources'))
    expect(body.sources[0].webhooks).toEqual({ enabled: true, urls: SHOWN, sharedSecret: '••••7890' })
    const text = JSON.stringify(body)
    for (const value of ['token-abcdef', 'backup-key', '"X-Team":"web"']) expect(text).not.toContain(value)
    const changed = await json(collector, put({ urls: [{ url: 'https://hooks.test/in', headers: { 'X-New': 'a-new-credential-wxyz' } }] }))
    expect(changed.body.source.webhooks.urls).toEqual([{ url: 'https://hooks.test/in', headers: { 'X-New': '••••wxyz' } }])
  })

  it('a PUT of the settings as read keeps every value; a new value replaces one, a header left out is removed', async () => {
    const { collector, calls, saved } = withHeaders()
    const read = (await json(collector, admin('/v1/admin/sources'))).body.sources[0].webhooks
    expect(await json(collector, put(read))).toMatchObject({ status: 200, body: { success: true } })
    expect(saved).toEqual([['web', { enabled: true, urls: HOOKS, sharedSecret: SECRET }]])
    expect(await collector.fetch(post({ batch: [track()] }))).toMatchObject({ status: 200 })
    await until(() => calls.length === 2, 'the deliveries to both URLs')
    const to = (url: string) => calls.find((c) => c.url === url)!
    expect(to(HOOKS[0].url).headers).toMatchObject({ authorization: BEARER, 'x-team': 'web' })
    expect(to(HOOKS[1].url).headers).toMatchObject({ 'x-key': BACKUP_KEY })
    expect(await verifySignature(to(HOOKS[0].url).body, to(HOOKS[0].url).headers['x-signature'], SECRET)).toBe(true)

    // A new value for X-Team, Authorization kept, X-Key left out; the URLs' order changed.
    const change = { urls: [{ url: 'https://backup.test/in' }, { url: 'https://hooks.test/in', headers: { Authorization: '••••1234', 'X-Team': 'growth' } }] }
    const answer = await json(collector, put(change))
    expect(answer.body.source.webhooks.urls).toEqual([{ url: 'https://backup.test/in' }, { url: 'https://hooks.test/in', headers: { Authorization: '••••1234', 'X-Team': '••••' } }])
    expect(saved[1][1].urls).toEqual([{ url: 'https://backup.test/in' }, { url: 'https://hooks.test/in', headers: { Authorization: BEARER, 'X-Team': 'growth' } }])
    await collector.fetch(post({ batch: [track({ messageId: 'm-2' })] }))
    await until(() => calls.length === 4, 'the deliveries with the new headers')
    expect(calls[2].headers['x-key']).toBeUndefined()
    expect(calls.slice(2).find((c) => c.url === HOOKS[0].url)!.headers).toMatchObject({ authorization: BEARER, 'x-team': 'growth' })
  })

  it('keeps a value under the same name written in another case (HTTP names are case-insensitive)', async () => {
    const { collector, saved } = withHeaders()
    const answer = await json(collector, put({ urls: [{ url: 'https://hooks.test/in', headers: { authorization: '••••1234' } }] }))
    expect(answer.status).toBe(200)
    expect(saved[0][1].urls).toEqual([{ url: 'https://hooks.test/in', headers: { authorization: BEARER } }])
  })

  it('keeps the values of a URL changed within its origin at its place (a new path), not of one moved to another host', async () => {
    const { collector, saved } = withHeaders()
    const change = { urls: [{ url: 'https://hooks.test/v2/in', headers: SHOWN[0].headers }, { url: 'https://backup.test/in?team=web', headers: SHOWN[1].headers }] }
    expect((await json(collector, put(change))).status).toBe(200)
    expect(saved[0][1].urls).toEqual([{ url: 'https://hooks.test/v2/in', headers: HOOKS[0].headers }, { url: 'https://backup.test/in?team=web', headers: HOOKS[1].headers }])
    const moved = await json(collector, put({ urls: [{ url: 'https://hooks.test:8443/v2/in', headers: { Authorization: '••••1234' } }] }))
    expect(moved).toMatchObject({ status: 400, body: { error: { field: 'sources[0].webhooks.urls[0].headers["Authorization"]' } } })
    expect(saved).toHaveLength(1)
  })

  it.each([
    ['under a renamed header', { urls: [{ url: 'https://hooks.test/in', headers: { 'X-Auth': '••••1234' } }] }, 'sources[0].webhooks.urls[0].headers["X-Auth"]', 'a renamed header'],
    ['for another URL', { urls: [{ url: 'https://other.test/in', headers: { Authorization: '••••1234' } }] }, 'sources[0].webhooks.urls[0].headers["Authorization"]', 'kept only for the URL it was set for'],
    ['that is not the one shown', { urls: SHOWN.map((u, i) => (i === 1 ? { ...u, headers: { 'X-Key': '••••0000' } } : u)) }, 'sources[0].webhooks.urls[1].headers["X-Key"]', 'not the masked form of the value held now'],
    ['for a shared secret that is not the one shown', { sharedSecret: '••••0000' }, 'sources[0].webhooks.sharedSecret', 'not the masked form'],
  ])('PUT refuses a masked value %s: a 400 naming the field, nothing saved, nothing changed', async (_, change, field, reason) => {
    const { collector, saved } = withHeaders()
    const before = await json(collector, admin('/v1/admin/sources'))
    const { status, body } = await json(collector, put(change))
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'VALIDATION', field })
    expect(body.error.message).toContain(`\`${field}\``)
    expect(body.error.message).toContain(reason)
    expect(saved).toEqual([])
    expect(await json(collector, admin('/v1/admin/sources'))).toEqual(before)
  })

  it('a masked shared secret as shown keeps the secret; one for a source without a secret is refused', async () => {
    const { collector, saved } = withHeaders()
    expect((await json(collector, put({ sharedSecret: '••••7890' }))).status).toBe(200)
    expect(saved[0][1].sharedSecret).toBe(SECRET)
    const app = await json(collector, admin('/v1/admin/sources/app/webhooks', { method: 'PUT', body: { urls: [{ url: 'https://app.test/in' }], sharedSecret: '••••' } }))
    expect(app).toMatchObject({ status: 400, body: { error: { field: 'sources[1].webhooks.sharedSecret', message: expect.stringContaining('no shared secret is set now') } } })
    expect(saved).toHaveLength(1)
  })
})
