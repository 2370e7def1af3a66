/** The console's page and admin endpoints, through `collector.fetch`. */
import { afterEach, describe, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../../src/collector/console/page.js'
import { createCollector, isConfigError, type Collector, type CollectorConfig, type SettingsStore, type SourceWebhooksConfig } from '../../../src/collector/index.js'
import { KEY, post, recordingFetch, track, until } from '../helpers.js'

const TOKEN = 'admin-token-for-tests'
const SECRET = 'a-long-shared-secret-7890'
const collectors: Collector[] = []

afterEach(async () => {
  await Promise.all(collectors.splice(0).map((c) => c.close(0)))
})

function consoleCollector(overrides: Partial<CollectorConfig> = {}, respond?: Parameters<typeof recordingFetch>[0]) {
  const receiver = recordingFetch(respond)
  const collector = createCollector({
    sources: [
      { writeKey: KEY, name: 'web', webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }], sharedSecret: SECRET } },
      { writeKey: 'OTHER', name: 'app' },
    ],
    adminToken: TOKEN,
    fetch: receiver.fetch,
    ...overrides,
  })
  collectors.push(collector)
  return { collector, calls: receiver.calls }
}

function admin(path: string, init: { method?: string; body?: unknown; token?: string } = {}): Request {
  return new Request(`http://collector.test${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.token ?? TOKEN}`, 'content-type': 'application/json' },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  })
}

async function json(collector: Collector, request: Request): Promise<{ status: number; body: any }> {
  const response = await collector.fetch(request)
  return { status: response.status, body: await response.json() }
}

function configError(webhooks: unknown): string {
  try {
    createCollector({ sources: [{ writeKey: KEY, name: 'web', webhooks: webhooks as never }] })
  } catch (error) {
    if (isConfigError(error)) return error.message
  }
  throw new Error('expected a ConfigError')
}

describe('GET /console', () => {
  it('serves the page and its assets with a strict Content-Security-Policy, and no inline script', async () => {
    const { collector } = consoleCollector()
    const page = await collector.fetch(new Request('http://collector.test/console'))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
    expect(CONSOLE_CSP).toContain("script-src 'self'")
    expect(CONSOLE_CSP).not.toContain('unsafe')
    const html = await page.text()
    expect(html).toContain('<script src="/console/console.js" defer></script>')
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//)
    const script = await collector.fetch(new Request('http://collector.test/console/console.js'))
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await script.text()).toContain('Admin token')
    const style = await collector.fetch(new Request('http://collector.test/console/console.css'))
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await collector.fetch(new Request('http://collector.test/console/other.js'))).status).toBe(404)
    expect((await collector.fetch(new Request('http://collector.test/console', { method: 'POST' }))).status).toBe(405)
  })

  it('without an admin token, says how to enable it; the admin endpoints do not exist', async () => {
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }] })
    collectors.push(collector)
    const page = await collector.fetch(new Request('http://collector.test/console'))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
    const html = await page.text()
    expect(html).toContain('--admin-token')
    expect(html).toContain('adminToken')
    expect(html).not.toContain('console.js')
    expect((await collector.fetch(admin('/v1/admin/sources'))).status).toBe(404)
  })
})

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
        { name: 'web', writeKey: '••••', webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }], sharedSecret: '••••7890' } },
        { name: 'app', writeKey: '••••', webhooks: { enabled: false, urls: [], sharedSecret: null } },
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
    expect((await collector.fetch(admin('/v1/admin/sources/nope/webhooks', { method: 'PUT', body: {} }))).status).toBe(404)
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

  it('GET /v1/admin/messages/stream: Server-Sent Events of the records that change, filtered; closing the collector ends it', async () => {
    const { collector } = consoleCollector()
    await collector.fetch(post({ batch: [track({ event: 'Before' })] }))
    expect((await collector.fetch(admin('/v1/admin/messages/stream', { token: 'wrong' }))).status).toBe(401)
    const response = await collector.fetch(admin('/v1/admin/messages/stream?since=0&type=track'))
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    // Read directly (a pipe would read ahead): each read is one event.
    const reader = response.body!.getReader()
    const next = async () => {
      const { value } = await reader.read()
      const [, id, data] = /^event: messages\nid: (\d+)\ndata: (.+)\n\n$/.exec(new TextDecoder().decode(value))!
      const answer = JSON.parse(data)
      expect(answer.version).toBe(Number(id))
      return answer as { version: number; messages: Array<{ type: string; name?: string; delivery: { outcome: string } }> }
    }
    const first = await next()
    expect(first.messages.map((m) => m.name)).toEqual(['Before'])
    const seen: string[] = []
    await collector.fetch(post({ batch: [{ type: 'identify', userId: 'u1' }, track({ event: 'After', messageId: 'm-2' })] }))
    while (!seen.includes('After delivered')) {
      const answer = await next()
      expect(answer.messages.length).toBeGreaterThan(0)
      seen.push(...answer.messages.map((m) => `${m.name} ${m.delivery.outcome}`))
    }
    expect(seen.every((m) => !m.startsWith('undefined'))).toBe(true) // The identify is filtered out.

    // A reader that does not keep up gets no backlog: what changed meanwhile comes in one event.
    for (const event of ['One', 'Two', 'Three']) await collector.fetch(post({ batch: [track({ event, messageId: event })] }))
    await until(() => collector.stats().pending === 0, 'deliveries settled')
    const waited = [await next(), await next()]
    expect(waited[0].messages.map((m) => m.name)).toEqual(['One'])
    expect(waited[1].messages.map((m) => `${m.name} ${m.delivery.outcome}`)).toEqual(['Three delivered', 'Two delivered', 'One delivered'])
    await collector.close(0)
    expect(await reader.read()).toEqual({ done: true, value: undefined })
    const late = (await collector.fetch(admin('/v1/admin/messages/stream?since=0'))).body!.getReader()
    expect((await late.read()).done).toBe(false)
    expect(await late.read()).toEqual({ done: true, value: undefined })
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

  it('reports a shared store that cannot load, and keeps the config\'s settings', async () => {
    const errors: unknown[] = []
    const store: SettingsStore = { kind: 'queue', durable: true, save: async () => true, load: () => Promise.reject(new Error('ECONNREFUSED')) }
    const { collector } = consoleCollector({ settings: store, onError: (error) => errors.push(error) })
    await until(() => errors.length === 1, 'the load failure reported')
    expect(String(errors[0])).toContain('Could not load the saved console settings (queue store)')
    expect((errors[0] as Error).cause).toMatchObject({ message: 'ECONNREFUSED' })
    expect((await json(collector, admin('/v1/admin/sources'))).body.sources[0].webhooks.urls).toEqual([{ url: 'https://hooks.test/in' }])
  })

  it('GET /v1/admin/messages: newest first, changes since a version, filters; retry only what failed', async () => {
    const { collector } = consoleCollector({}, (call) => new Response('no', { status: call.json.event === 'Bad' ? 400 : 200 }))
    await collector.fetch(post({ batch: [track({ event: 'Good' }), track({ event: 'Bad', messageId: 'm-2' }), { type: 'identify', userId: 'u1' }] }))
    await until(() => collector.stats().pending === 0, 'deliveries settled')
    const all = await json(collector, admin('/v1/admin/messages'))
    expect(all.body.messages.map((m: any) => [m.type, m.name, m.delivery.outcome])).toEqual([
      ['identify', undefined, 'delivered'], ['track', 'Bad', 'failed'], ['track', 'Good', 'delivered'],
    ])
    expect(all.body.messages[1].delivery.attempts).toEqual([
      { attempt: 1, at: expect.any(String), results: [{ url: 'https://hooks.test/in', status: 400, error: expect.stringContaining('400') }] },
    ])
    expect((await json(collector, admin(`/v1/admin/messages?since=${all.body.version}`))).body.messages).toEqual([])
    expect((await json(collector, admin('/v1/admin/messages?type=track&event=Good'))).body.messages).toHaveLength(1)
    expect((await collector.fetch(admin('/v1/admin/messages?since=x'))).status).toBe(400)

    const good = all.body.messages[2].id
    const bad = all.body.messages[1].id
    expect((await json(collector, admin(`/v1/admin/messages/${good}/retry`, { method: 'POST' }))).status).toBe(409)
    expect((await collector.fetch(admin('/v1/admin/messages/999/retry', { method: 'POST' }))).status).toBe(404)
    const retried = await json(collector, admin(`/v1/admin/messages/${bad}/retry`, { method: 'POST' }))
    expect(retried).toMatchObject({ status: 202, body: { message: { id: bad } } })
    await until(() => collector.stats().pending === 0, 'the retry settled')
    const again = await json(collector, admin(`/v1/admin/messages/${bad}`))
    expect(again.body.delivery.attempts.map((a: any) => a.attempt)).toEqual([1, 2])
    expect((await json(collector, admin('/v1/admin/activity'))).body.minutes.reduce((n: number, m: any) => n + m.failed, 0)).toBe(2)
  })
})

describe('messages with integers beyond 2^53', () => {
  it('are answered digit for digit by the messages endpoints (not a 500)', async () => {
    const { collector } = consoleCollector()
    const response = await collector.fetch(new Request('http://collector.test/v1/track', {
      method: 'POST',
      headers: { authorization: `Basic ${btoa(`${KEY}:`)}`, 'content-type': 'application/json' },
      body: '{"event":"Big","userId":"u","properties":{"id":9223372036854775807}}',
    }))
    expect(response.status).toBe(200)
    const list = await collector.fetch(admin('/v1/admin/messages'))
    expect(list.status).toBe(200)
    const text = await list.text()
    expect(text).toContain('"id":9223372036854775807')
    const id = (JSON.parse(text) as { messages: Array<{ id: string }> }).messages[0].id
    expect(await (await collector.fetch(admin(`/v1/admin/messages/${id}`))).text()).toContain('"id":9223372036854775807')
  })
})
