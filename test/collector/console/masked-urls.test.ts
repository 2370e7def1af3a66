/**
 * Credentials in webhook URLs (`?token=`, `?api_key=`, `?password=`, `?sig=`, and a Slack,
 * Discord or random-looking token in the path) in the admin endpoints: shown masked as logs show them, in the settings and in each attempt of the messages'
 * deliveries; a masked URL sent back as shown keeps the URL it stands for, and one that stands for
 * no URL held is refused, never sent anything.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SettingsStore, SourceWebhooksConfig, WebhookUrlConfig } from '../../../src/collector/index.js'
import { KEY, post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

const HOOKS: WebhookUrlConfig[] = [
  { url: 'https://hooks.example/in?token=s3cret', headers: { Authorization: 'Bearer header-credential-4321' } },
  { url: 'https://hooks.example/b?api_key=ak_live_0123456789&team=web' },
  { url: 'https://hooks.example/c?password=hunter2-long-9876' },
  { url: 'https://hooks.example/d?sig=abcdefghij' },
]
const SHOWN: WebhookUrlConfig[] = [
  { url: 'https://hooks.example/in?token=…', headers: { Authorization: '••••4321' } },
  { url: 'https://hooks.example/b?api_key=…6789&team=web' },
  { url: 'https://hooks.example/c?password=…9876' },
  { url: 'https://hooks.example/d?sig=…ghij' },
]
const SECRETS = ['s3cret', 'ak_live_0123', 'hunter2', 'abcdefghij', 'header-credential']

/** A collector whose `web` source forwards to `urls`, with a store recording each save. */
function withUrls(urls: WebhookUrlConfig[] = HOOKS, respond?: Parameters<typeof consoleCollector>[1]) {
  const saved: Array<[string, SourceWebhooksConfig]> = []
  const settings: SettingsStore = { kind: 'file', durable: true, save: async (...args) => (saved.push(args), true) }
  const sources = [{ writeKey: KEY, name: 'web', webhooks: { urls } }, { writeKey: 'OTHER', name: 'app' }]
  return { ...consoleCollector({ sources, settings }, respond), saved }
}

const put = (body: unknown, headers?: Record<string, string>) => admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body, ...(headers && { headers }) })
const expectNoSecret = (body: unknown) => {
  const text = JSON.stringify(body)
  for (const secret of SECRETS) expect(text).not.toContain(secret)
}

describe('credentials in webhook URLs, in the settings endpoints', () => {
  it('GET /v1/admin/sources, GET and PUT of one source show them masked, never in full', async () => {
    const { collector } = withUrls()
    const all = await json(collector, admin('/v1/admin/sources'))
    expect(all.body.sources[0].webhooks.urls).toEqual(SHOWN)
    expectNoSecret(all.body)
    const one = await json(collector, admin('/v1/admin/sources/web/webhooks'))
    expect(one.body.source.webhooks.urls).toEqual(SHOWN)
    expectNoSecret(one.body)
    const changed = await json(collector, put({ urls: [{ url: 'https://new.example/in?access_token=at_new_secret_wxyz' }] }))
    expect(changed.body.source.webhooks.urls).toEqual([{ url: 'https://new.example/in?access_token=…wxyz' }])
    expect(JSON.stringify(changed.body)).not.toContain('at_new_secret')
  })

  it('a PUT of the settings as read (with If-Match) keeps every URL and header whole; deliveries go to the real URLs', async () => {
    const { collector, calls, saved } = withUrls()
    const response = await collector.fetch(admin('/v1/admin/sources/web/webhooks'))
    const read = ((await response.json()) as { source: { webhooks: unknown } }).source.webhooks
    const answer = await json(collector, put(read, { 'if-match': response.headers.get('etag')! }))
    expect(answer).toMatchObject({ status: 200, body: { success: true, source: { webhooks: { urls: SHOWN } } } })
    expect(saved).toEqual([['web', { enabled: true, urls: HOOKS }]])
    expect(await collector.fetch(post({ batch: [track()] }))).toMatchObject({ status: 200 })
    await until(() => calls.length === HOOKS.length, 'the deliveries to every URL')
    expect(calls.map((c) => c.url).sort()).toEqual(HOOKS.map((h) => h.url).sort())
    expect(calls.find((c) => c.url === HOOKS[0].url)!.headers.authorization).toBe('Bearer header-credential-4321')

    // Reordered, one left out, one percent-encoded (`new URL` writes `…` so): each masked URL keeps its own.
    const change = { urls: [SHOWN[3], { url: 'https://hooks.example/c?password=%E2%80%A69876' }, SHOWN[0]] }
    expect((await json(collector, put(change))).status).toBe(200)
    expect(saved[1][1].urls).toEqual([HOOKS[3], HOOKS[2], HOOKS[0]])
  })

  it('two URLs that look the same masked are told apart by their place', async () => {
    const urls = [{ url: 'https://hooks.example/in?token=first-secret' }, { url: 'https://hooks.example/in?token=other-secret' }]
    const { collector, saved } = withUrls(urls)
    const read = (await json(collector, admin('/v1/admin/sources/web/webhooks'))).body.source.webhooks
    expect(read.urls).toEqual([{ url: 'https://hooks.example/in?token=…cret' }, { url: 'https://hooks.example/in?token=…cret' }])
    expect((await json(collector, put(read))).status).toBe(200)
    expect(saved[0][1].urls).toEqual(urls)
    // A third place has no URL of its own: which of the two it stands for cannot be told.
    const third = await json(collector, put({ urls: [{ url: 'https://a.example/' }, { url: 'https://b.example/' }, read.urls[0]] }))
    expect(third).toMatchObject({ status: 400, body: { error: { field: 'sources[0].webhooks.urls[2].url', message: expect.stringContaining('several URLs') } } })
  })

  it.each([
    ['another host around the mask', { urls: [{ url: 'https://elsewhere.example/in?token=…' }] }, 'urls[0].url'],
    ['another path around the mask', { urls: [{ url: 'https://hooks.example/other?token=…' }] }, 'urls[0].url'],
    ['a mask that is not the one shown', { urls: [{ url: 'https://hooks.example/b?api_key=…0000&team=web' }] }, 'urls[0].url'],
    ['a masked password in the userinfo', { urls: [SHOWN[1], { url: 'https://user:…@hooks.example/in' }] }, 'urls[1].url'],
  ])('PUT refuses a masked URL with %s: a 400 naming the field, nothing saved, nothing changed', async (_, change, field) => {
    const { collector, saved } = withUrls()
    const before = await json(collector, admin('/v1/admin/sources'))
    const { status, body } = await json(collector, put(change))
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'VALIDATION', field: `sources[0].webhooks.${field}` })
    expect(body.error.message).toContain('masked value that cannot be kept')
    expect(saved).toEqual([])
    expect(await json(collector, admin('/v1/admin/sources'))).toEqual(before)
  })
})

describe('credentials in webhook URLs\' paths, in the settings endpoints', () => {
  const PATH_HOOKS: WebhookUrlConfig[] = [
    { url: 'https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX' },
    { url: 'https://discord.com/api/webhooks/123456789012345678/AbCdEf-gHiJkL_mNoPqRsTuVwXyZ0123456789' },
    { url: 'https://example.com/hooks/f3b2c1d0e9a8b7c6d5e4f3a2' },
    { url: 'https://example.com/v1/webhooks/orders' },
  ]
  const PATH_SHOWN: WebhookUrlConfig[] = [
    { url: 'https://hooks.slack.com/services/T00000000/B00000000/…XXXX' },
    { url: 'https://discord.com/api/webhooks/123456789012345678/…6789' },
    { url: 'https://example.com/hooks/…f3a2' },
    { url: 'https://example.com/v1/webhooks/orders' },
  ]
  const PATH_SECRETS = ['XXXXXXXX', 'AbCdEf', 'f3b2c1d0']

  it('are shown masked; a PUT as read keeps every real URL, and deliveries go to them', async () => {
    const { collector, calls, saved } = withUrls(PATH_HOOKS)
    const response = await collector.fetch(admin('/v1/admin/sources/web/webhooks'))
    const read = ((await response.json()) as { source: { webhooks: { urls: WebhookUrlConfig[] } } }).source.webhooks
    expect(read.urls).toEqual(PATH_SHOWN)
    for (const secret of PATH_SECRETS) expect(JSON.stringify(read)).not.toContain(secret)
    const answer = await json(collector, put(read, { 'if-match': response.headers.get('etag')! }))
    expect(answer).toMatchObject({ status: 200, body: { source: { webhooks: { urls: PATH_SHOWN } } } })
    expect(saved).toEqual([['web', { enabled: true, urls: PATH_HOOKS }]])
    expect(await collector.fetch(post({ batch: [track()] }))).toMatchObject({ status: 200 })
    await until(() => calls.length === PATH_HOOKS.length, 'the deliveries to every URL')
    expect(calls.map((c) => c.url).sort()).toEqual(PATH_HOOKS.map((h) => h.url).sort())

    // Reordered, and percent-encoded as `new URL` writes `…` in a path: each keeps its own.
    const change = { urls: [{ url: new URL(PATH_SHOWN[2].url).href }, { url: new URL(PATH_SHOWN[0].url).href }] }
    expect(change.urls[1].url).toBe('https://hooks.slack.com/services/T00000000/B00000000/%E2%80%A6XXXX')
    expect((await json(collector, put(change))).status).toBe(200)
    expect(saved[1][1].urls).toEqual([PATH_HOOKS[2], PATH_HOOKS[0]])
  })

  it.each([
    ['another Slack channel around the mask', 'https://hooks.slack.com/services/T00000000/B11111111/…XXXX'],
    ['another Discord webhook around the mask', 'https://discord.com/api/webhooks/999999999999999999/…6789'],
    ['another host around a random token\'s mask', 'https://elsewhere.example/hooks/…f3a2'],
  ])('PUT refuses a URL masked in its path with %s: a 400 naming the field, nothing saved, nothing sent', async (_, url) => {
    const { collector, calls, saved } = withUrls(PATH_HOOKS)
    const { status, body } = await json(collector, put({ urls: [PATH_SHOWN[3], { url }] }))
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'VALIDATION', field: 'sources[0].webhooks.urls[1].url' })
    expect(body.error.message).toContain('masked value that cannot be kept')
    expect(saved).toEqual([])
    expect((await json(collector, admin('/v1/admin/sources/web/webhooks'))).body.source.webhooks.urls).toEqual(PATH_SHOWN)
    expect(calls).toEqual([])
  })
})

describe('credentials in webhook URLs, in the messages endpoints', () => {
  it('GET /v1/admin/messages, /messages/{id}, the stream and a retry show each attempt\'s URL masked', async () => {
    const { collector, calls } = withUrls(HOOKS.slice(0, 2), () => new Response('no', { status: 400 }))
    await collector.fetch(post({ batch: [track({ event: 'Refused' })] }))
    await until(() => collector.stats().pending === 0, 'the delivery settled')
    expect(calls.map((c) => c.url).sort()).toEqual([HOOKS[0].url, HOOKS[1].url].sort())
    const shown = [
      { url: SHOWN[0].url, status: 400, error: expect.stringContaining('400'), answer: 'no', durationMs: expect.any(Number) },
      { url: SHOWN[1].url, status: 400, error: expect.stringContaining('400'), answer: 'no', durationMs: expect.any(Number) },
    ]
    const list = await json(collector, admin('/v1/admin/messages'))
    expect(list.body.messages[0].delivery.attempts[0].results).toEqual(shown)
    expectNoSecret(list.body)
    const { id } = list.body.messages[0]
    const one = await json(collector, admin(`/v1/admin/messages/${id}`))
    expect(one.body.delivery.attempts[0].results).toEqual(shown)
    expectNoSecret(one.body)
    const reader = (await collector.fetch(admin('/v1/admin/messages/stream?since=0'))).body!.getReader()
    const event = new TextDecoder().decode((await reader.read()).value)
    expect(event).toContain(SHOWN[1].url)
    expectNoSecret(event)
    await reader.cancel()
    const retried = await json(collector, admin(`/v1/admin/messages/${id}/retry`, { method: 'POST' }))
    expect(retried).toMatchObject({ status: 202, body: { message: { id } } })
    expect(retried.body.message.delivery.attempts[0].results).toEqual(shown)
    expectNoSecret(retried.body)
    await until(() => collector.stats().pending === 0, 'the retry settled')
    expect(calls).toHaveLength(4)
  })
})
