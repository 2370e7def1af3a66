/**
 * Optimistic concurrency of the settings endpoints: each source's settings have a version (`ETag`,
 * `version`); a `PUT` with `If-Match` made from settings changed since (another tab, another
 * admin, another collector process) is refused with 409 and changes nothing, so the stale editor
 * cannot undo the other change. A `PUT` without `If-Match` overwrites, as before.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SavedIf, SettingsStore, SourceWebhooksConfig } from '../../../src/collector/index.js'
import { post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

const PATH = '/v1/admin/sources/web/webhooks'
const put = (body: unknown, ifMatch?: string) => admin(PATH, { method: 'PUT', body, ...(ifMatch !== undefined && { headers: { 'if-match': ifMatch } }) })
const ADDED = { url: 'https://added.test/in', headers: { Authorization: 'Bearer added-credential-9876' } }

describe('versions of the settings', () => {
  it('GET of one source answers its settings with their version as ETag, the same as in the list', async () => {
    const { collector } = consoleCollector()
    const one = await collector.fetch(admin(PATH))
    const { source } = await one.json()
    expect(one.status).toBe(200)
    expect(source).toMatchObject({ name: 'web', version: expect.stringMatching(/^[0-9a-f]{16}$/), webhooks: { urls: [{ url: 'https://hooks.test/in' }] } })
    expect(one.headers.get('etag')).toBe(`"${source.version}"`)
    expect((await json(collector, admin('/v1/admin/sources'))).body.sources[0]).toEqual(source)
    const wrong = await collector.fetch(admin(PATH, { method: 'POST', body: {} }))
    expect([wrong.status, wrong.headers.get('allow')]).toEqual([405, 'GET, PUT'])
    expect((await collector.fetch(admin('/v1/admin/sources/nope/webhooks'))).status).toBe(404)
  })

  it('a stale tab (If-Match of settings read before another change) is refused with 409; nothing changes; with the new version it saves', async () => {
    const { collector, calls } = consoleCollector()
    const read = (await json(collector, admin(PATH))).body.source
    // Tab B adds a URL with a credential header.
    const b = await collector.fetch(put({ urls: [...read.webhooks.urls, ADDED] }, `"${read.version}"`))
    const saved = (await b.json()).source
    expect(b.status).toBe(200)
    expect(saved.version).not.toBe(read.version)
    expect(b.headers.get('etag')).toBe(`"${saved.version}"`)
    // Tab A, read before, turns forwarding off: refused, and B's URL and header stay.
    const a = await collector.fetch(put({ enabled: false, urls: read.webhooks.urls }, `"${read.version}"`))
    expect(a.status).toBe(409)
    expect(a.headers.get('etag')).toBe(`"${saved.version}"`)
    expect(await a.json()).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.stringContaining('The Webhooks settings of source "web" changed since they were read') } })
    expect((await json(collector, admin(PATH))).body.source).toEqual(saved)
    expect((await collector.fetch(post({ batch: [track()] }))).status).toBe(200)
    await until(() => calls.length === 2, 'the deliveries to both URLs')
    expect(calls.find((c) => c.url === ADDED.url)?.headers.authorization).toBe(ADDED.headers.Authorization)
    // Read again, the change is made on the current settings.
    const again = await json(collector, put({ enabled: false, urls: saved.webhooks.urls }, `"${saved.version}"`))
    expect(again).toMatchObject({ status: 200, body: { source: { webhooks: { enabled: false, urls: saved.webhooks.urls } } } })
  })

  it('If-Match: * and a list holding the version match; a weak tag or another version does not; without If-Match a PUT overwrites', async () => {
    const { collector } = consoleCollector()
    const { version } = (await json(collector, admin(PATH))).body.source
    expect((await collector.fetch(put({ enabled: true }, `W/"${version}"`))).status).toBe(409)
    expect((await collector.fetch(put({ enabled: true }, '"0000000000000000"'))).status).toBe(409)
    expect((await collector.fetch(put({ enabled: true }, `"0000000000000000", "${version}"`))).status).toBe(200)
    expect((await collector.fetch(put({ enabled: false }, '*'))).status).toBe(200)
    expect((await collector.fetch(put({ enabled: true }))).status).toBe(200)
    expect((await json(collector, admin(PATH))).body.source.webhooks.enabled).toBe(true)
  })

  it('the version is of the settings: two processes holding the same settings give the same one, and a change back gives it again', async () => {
    const a = consoleCollector()
    const b = consoleCollector()
    const versionOf = async (c: typeof a) => (await json(c.collector, admin(PATH))).body.source.version
    const first = await versionOf(a)
    expect(await versionOf(b)).toBe(first)
    await a.collector.fetch(put({ enabled: false }))
    expect(await versionOf(a)).not.toBe(first)
    await a.collector.fetch(put({ enabled: true }))
    expect(await versionOf(a)).toBe(first)
  })

  it('with a shared store: a change another process saved is refused at the store (saveIf) even before its notice comes, and then shown', async () => {
    // The queue server as one map; this process never hears of the other's change (its notice is late).
    const held = new Map<string, SourceWebhooksConfig>()
    const previous: unknown[] = []
    const store: SettingsStore = {
      kind: 'queue',
      durable: true,
      save: async (source, webhooks) => (held.set(source, webhooks), true),
      load: async () => Object.fromEntries(held),
      async saveIf(source, webhooks, was): Promise<SavedIf> {
        previous.push(was)
        if (JSON.stringify(held.get(source)) !== JSON.stringify(was)) return { kept: false, held: held.get(source) }
        held.set(source, webhooks)
        return { kept: true, durable: true }
      },
    }
    const { collector } = consoleCollector({ settings: store })
    const read = (await json(collector, admin(PATH))).body.source
    const mine = await json(collector, put({ urls: read.webhooks.urls }, `"${read.version}"`))
    expect(mine.status).toBe(200)
    expect(previous).toEqual([undefined])
    // Another process saves, from the same version.
    held.set('web', { enabled: true, urls: [ADDED] })
    const stale = await collector.fetch(put({ enabled: false }, `"${mine.body.source.version}"`))
    expect(stale.status).toBe(409)
    expect(previous[1]).toEqual({ enabled: true, urls: read.webhooks.urls, sharedSecret: expect.any(String) })
    expect(held.get('web')).toEqual({ enabled: true, urls: [ADDED] })
    // This process applied what the store holds: read again, the change goes through.
    const now = (await json(collector, admin(PATH))).body.source
    expect(now.webhooks.urls).toEqual([{ url: ADDED.url, headers: { Authorization: '••••9876' } }])
    expect((await collector.fetch(put({ enabled: false }, `"${now.version}"`))).status).toBe(200)
    expect(held.get('web')).toEqual({ enabled: false, urls: [ADDED] })
    // Without If-Match, the plain save: it overwrites.
    expect((await collector.fetch(put({ enabled: true }))).status).toBe(200)
    expect(previous).toHaveLength(3)
  })
})
