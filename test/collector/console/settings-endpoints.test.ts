/**
 * The console's admin endpoints for sources, through `collector.fetch`: the admin token, reading
 * and changing a source's webhooks, and keeping them with a settings store (own or shared).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, isConfigError, type Collector, type SettingsStore, type SourceWebhooksConfig } from '../../../src/collector/index.js'
import { KEY, post, track, until } from '../helpers.js'
import { SECRET, admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

function configError(webhooks: unknown): string {
  try {
    createCollector({ sources: [{ writeKey: KEY, name: 'web', webhooks: webhooks as never }] })
  } catch (error) {
    if (isConfigError(error)) return error.message
  }
  throw new Error('expected a ConfigError')
}

describe('admin endpoints of the console', () => {
  it('refuse a missing or wrong token', async () => {
    const { collector } = consoleCollector()
    expect((await collector.fetch(new Request('http://collector.test/v1/admin/sources'))).status).toBe(401)
    const wrong = await json(collector, admin('/v1/admin/sources', { token: 'nope' }))
    expect(wrong).toMatchObject({ status: 401, body: { error: { code: 'UNAUTHORIZED', message: 'Wrong admin token.' } } })
  })

  it('GET /v1/admin/sources: settings with the secret and write key masked, and where they are kept', async () => {
    const { collector } = consoleCollector()
    const { status, body } = await json(collector, admin('/v1/admin/sources'))
    expect(status).toBe(200)
    expect(body).toEqual({
      settings: { store: 'memory', durable: false, notice: expect.stringContaining('will not survive a restart') },
      sources: [
        { name: 'web', writeKey: '••••', version: expect.stringMatching(/^[0-9a-f]{16}$/), webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }], sharedSecret: '••••7890' } },
        { name: 'app', writeKey: '••••', version: expect.stringMatching(/^[0-9a-f]{16}$/), webhooks: { enabled: false, urls: [], sharedSecret: null } },
      ],
    })
    expect(JSON.stringify(body)).not.toContain(SECRET)
  })

  it.each([
    ['more than five URLs', { urls: Array.from({ length: 6 }, (_, i) => ({ url: `https://hooks.test/${i}` })) }],
    ['a URL that is not http(s)', { urls: [{ url: 'ftp://hooks.test/in' }] }],
    ['a header with CR/LF', { urls: [{ url: 'https://hooks.test/in', headers: { 'X-Team': 'a\r\nInjected: yes' } }] }],
  ])('PUT refuses %s with the config error naming the field, and changes nothing', async (_, change) => {
    const { collector } = consoleCollector()
    const before = await json(collector, admin('/v1/admin/sources'))
    const { status, body } = await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: change }))
    const expected = configError({ enabled: true, sharedSecret: SECRET, ...change })
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'VALIDATION', message: expected })
    expect(body.error.field).toMatch(/^sources\[0\]\.webhooks\.urls/)
    expect(await json(collector, admin('/v1/admin/sources'))).toEqual(before)
  })

  it.each([
    ['a secret that is an object', { sharedSecret: { length: 40 } }, 'sources[1].webhooks.sharedSecret'],
    ['a secret that is a number', { sharedSecret: 12345 }, 'sources[1].webhooks.sharedSecret'],
    ['an empty secret', { sharedSecret: '' }, 'sources[1].webhooks.sharedSecret'],
    ['a URL that is not http(s)', { urls: [{ url: 'ftp://x.test/' }] }, 'sources[1].webhooks.urls[0].url'],
  ])('PUT with the destination off still refuses %s: a 400 naming the field, nothing saved, GET still answers', async (_, change, field) => {
    const saved: unknown[] = []
    const store: SettingsStore = { kind: 'file', durable: true, save: async (...args) => (saved.push(args), true) }
    const { collector } = consoleCollector({ settings: store })
    const before = await json(collector, admin('/v1/admin/sources'))
    const { status, body } = await json(collector, admin('/v1/admin/sources/app/webhooks', { method: 'PUT', body: { enabled: false, ...change } }))
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'VALIDATION', field })
    expect(body.error.message).toContain(`\`${field}\``)
    expect(saved).toEqual([])
    expect(await json(collector, admin('/v1/admin/sources'))).toEqual(before)
  })

  it('PUT applies to the next message without a restart; a source is turned on, and its secret replaced or removed', async () => {
    const { collector, calls } = consoleCollector()
    const on = await json(collector, admin('/v1/admin/sources/app/webhooks', {
      method: 'PUT',
      body: { enabled: true, urls: [{ url: 'https://app.test/hook', headers: { 'X-Team': 'app' } }], sharedSecret: 'another-secret-abcd' },
    }))
    expect(on).toMatchObject({ status: 200, body: { persisted: false, source: { name: 'app', webhooks: { enabled: true, sharedSecret: '••••abcd' } } } })
    expect((await collector.fetch(post({ batch: [track()] }, { key: 'OTHER' }))).status).toBe(200)
    await until(() => calls.length === 1, 'the delivery to the new URL')
    expect(calls[0]).toMatchObject({ url: 'https://app.test/hook', headers: { 'x-team': 'app', 'x-signature': expect.any(String) } })

    const removed = await json(collector, admin('/v1/admin/sources/app/webhooks', { method: 'PUT', body: { sharedSecret: null } }))
    expect(removed.body.source.webhooks).toMatchObject({ sharedSecret: null, urls: [{ url: 'https://app.test/hook' }] })
    await collector.fetch(post({ batch: [track({ messageId: 'm-2' })] }, { key: 'OTHER' }))
    await until(() => calls.length === 2, 'the unsigned delivery')
    expect(calls[1].headers['x-signature']).toBeUndefined()

    const off = await json(collector, admin('/v1/admin/sources/app/webhooks', { method: 'PUT', body: { enabled: false } }))
    expect(off.body.source.webhooks).toMatchObject({ enabled: false, urls: [{ url: 'https://app.test/hook' }] })
    await collector.fetch(post({ batch: [track({ messageId: 'm-3' })] }, { key: 'OTHER' }))
    const { body } = await json(collector, admin('/v1/admin/messages?source=app'))
    expect(body.messages[0].delivery).toEqual({ outcome: 'not forwarded', reason: 'the Webhooks destination is off', attempts: [] })
    expect(calls).toHaveLength(2)
  })

  it('PUT refuses an unknown source and an unknown option', async () => {
    const { collector } = consoleCollector()
    const nope = await collector.fetch(admin('/v1/admin/sources/nope/webhooks', { method: 'PUT', body: {} }))
    expect(nope.status).toBe(404)
    expect(await nope.json()).toMatchObject({ error: { code: 'NOT_FOUND', message: 'No source is named "nope".' } })
    const malformed = await collector.fetch(admin('/v1/admin/sources/%E0%A4%A/webhooks', { method: 'PUT', body: {} }))
    expect(malformed.status).toBe(404)
    expect(await malformed.json()).toMatchObject({ error: { code: 'NOT_FOUND', message: expect.stringContaining('percent-encoding is malformed') } })
    const twice = await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: 'https://h.test/ok' }, { url: 'https://h.test/ok' }] } }))
    expect(twice).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION', field: 'sources[0].webhooks.urls[1].url' } } })
    const unknown = await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { url: 'x' } }))
    expect(unknown).toMatchObject({ status: 400, body: { error: { field: 'sources[0].webhooks.url' } } })
  })

  it('keeps settings with the settings store, and changes nothing when the store fails', async () => {
    const saved: Array<[string, unknown]> = []
    let fail = false
    const store: SettingsStore = {
      kind: 'file',
      durable: true,
      async save(source, webhooks) {
        if (fail) throw new Error('disk full')
        saved.push([source, webhooks])
        return true
      },
    }
    const { collector } = consoleCollector({ settings: store, onError: () => {} })
    const answer = await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: 'https://b.test/in' }] } }))
    expect(answer.body.persisted).toBe(true)
    expect(saved).toEqual([['web', { enabled: true, urls: [{ url: 'https://b.test/in' }], sharedSecret: SECRET }]])
    expect((await json(collector, admin('/v1/admin/sources'))).body.settings).toEqual({ store: 'file', durable: true })
    fail = true
    expect((await collector.fetch(admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: 'https://c.test/in' }] } }))).status).toBe(500)
    expect((await json(collector, admin('/v1/admin/sources'))).body.sources[0].webhooks.urls).toEqual([{ url: 'https://b.test/in' }])
  })

  it('with a store shared by several collectors: loads its settings at start, and applies a change saved by another', async () => {
    // The seam the queue server's store plugs into: one store object stands for the shared server.
    const saved = new Map<string, SourceWebhooksConfig>([['app', { urls: [{ url: 'https://saved.test/in' }] }]])
    const watchers = new Set<(source: string, webhooks: SourceWebhooksConfig) => void>()
    const shared = (): SettingsStore => {
      let mine: ((source: string, webhooks: SourceWebhooksConfig) => void) | undefined
      return {
        kind: 'queue',
        durable: true,
        async save(source, webhooks) {
          saved.set(source, webhooks)
          for (const watcher of watchers) if (watcher !== mine) watcher(source, webhooks)
          return true
        },
        load: async () => Object.fromEntries(saved),
        watch(onChange) {
          watchers.add((mine = onChange))
          return () => watchers.delete(onChange)
        },
      }
    }
    const errors: unknown[] = []
    const a = consoleCollector({ settings: shared(), onError: (error) => errors.push(error) })
    const b = consoleCollector({ settings: shared(), onError: (error) => errors.push(error) })
    const urlsOf = async (collector: Collector) => (await json(collector, admin('/v1/admin/sources'))).body.sources[1].webhooks
    await expect.poll(() => urlsOf(b.collector)).toMatchObject({ enabled: true, urls: [{ url: 'https://saved.test/in' }] })
    expect((await json(b.collector, admin('/v1/admin/sources'))).body.settings).toEqual({ store: 'queue', durable: true })

    const put = await json(a.collector, admin('/v1/admin/sources/app/webhooks', { method: 'PUT', body: { urls: [{ url: 'https://shared.test/in' }] } }))
    expect(put).toMatchObject({ status: 200, body: { persisted: true } })
    await expect.poll(() => urlsOf(b.collector)).toMatchObject({ urls: [{ url: 'https://shared.test/in' }] })
    expect((await b.collector.fetch(post({ batch: [track()] }, { key: 'OTHER' }))).status).toBe(200)
    await until(() => b.calls.length === 1, 'the delivery to the shared URL')
    expect(b.calls[0].url).toBe('https://shared.test/in')

    // A change another process saved that this one cannot use is reported, and changes nothing here.
    for (const watcher of watchers) watcher('app', { urls: [{ url: 'ftp://bad.test' }] })
    await until(() => errors.length === 2, 'both collectors reported it')
    expect(errors.every((e) => isConfigError(e) && e.option === 'sources[1].webhooks.urls[0].url')).toBe(true)
    expect((await urlsOf(b.collector)).urls).toEqual([{ url: 'https://shared.test/in' }])
    await b.collector.close(0)
    expect(watchers.size).toBe(1)
  })

  it('a shared store holding a bad secret for a disabled destination: reported at load, the config\'s settings stay, GET answers', async () => {
    const errors: unknown[] = []
    const store: SettingsStore = { kind: 'queue', durable: true, save: async () => true, load: async () => ({ app: { enabled: false, sharedSecret: { length: 40 } as never } }) }
    const { collector } = consoleCollector({ settings: store, onError: (error) => errors.push(error) })
    await until(() => errors.length === 1, 'the bad saved setting reported')
    expect(errors[0]).toMatchObject({ option: 'sources[1].webhooks.sharedSecret' })
    const { status, body } = await json(collector, admin('/v1/admin/sources'))
    expect(status).toBe(200)
    expect(body.sources[1].webhooks).toEqual({ enabled: false, urls: [], sharedSecret: null })
  })

  it('reports a shared store that cannot load, and keeps the config\'s settings', async () => {
    const errors: unknown[] = []
    const store: SettingsStore = { kind: 'queue', durable: true, save: async () => true, load: () => Promise.reject(new Error('ECONNREFUSED')) }
    const { collector } = consoleCollector({ settings: store, onError: (error) => errors.push(error) })
    await until(() => errors.length === 1, 'the load failure reported')
    expect(String(errors[0])).toContain('Could not load the saved console settings (queue store)')
    expect((errors[0] as Error).cause).toMatchObject({ message: 'ECONNREFUSED' })
    expect((await json(collector, admin('/v1/admin/sources'))).body.sources[0].webhooks.urls).toEqual([{ url: 'https://hooks.test/in' }])
  })
})
