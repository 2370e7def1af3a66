/**
 * No SSRF through the console or the admin API: a webhook URL set there may not reach loopback,
 * private, link-local, carrier-grade NAT, unique-local or IPv4-mapped addresses, in any spelling,
 * when saved; and a name that resolves to such an address at delivery is refused as it connects
 * (real sockets, the DNS lookup replaced for one name). The config's own URLs are trusted, and
 * `allowPrivateWebhookUrls` allows private networks.
 */
import dns from 'node:dns'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, nodeFetch, type Collector, type CollectorConfig } from '../../../src/collector/index.js'
import { basic, KEY, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json, TOKEN } from './support.js'

afterEach(async () => {
  vi.restoreAllMocks()
  await closeCollectors()
})

const put = (url: string) => admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url }] } })

describe('a webhook URL saved through the admin API', () => {
  it.each<[string, string]>([
    ['http://127.0.0.1/hook', 'loopback'],
    ['http://127.0.0.1:6379/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.0.1.3/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]:8080/', 'loopback'],
    ['http://localhost/', 'loopback'],
    ['http://LOCALHOST.:8080/', 'loopback'],
    ['http://api.localhost/', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local (the cloud metadata service is one)'],
    ['http://0xa9fea9fe/', 'link-local (the cloud metadata service is one)'],
    ['http://[fe80::1]/', 'link-local (the cloud metadata service is one)'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://100.64.0.1/', 'carrier-grade NAT'],
    ['http://100.127.255.254/', 'carrier-grade NAT'],
    ['http://[fc00::1]/', 'unique-local'],
    ['http://[fd12:3456::1]/', 'unique-local'],
    ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped'],
    ['http://[::ffff:a9fe:a9fe]/', 'IPv4-mapped'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
  ])('%s is refused (%s)', async (url, range) => {
    const { collector } = consoleCollector()
    const { status, body } = await json(collector, put(url))
    expect(status).toBe(400)
    expect(body.error.field).toBe('sources[0].webhooks.urls[0].url')
    expect(body.error.message).toContain(`Expected \`sources[0].webhooks.urls[0].url\` to reach a public address; its host is a ${range} address`)
    expect(body.error.message).toContain('allowPrivateWebhookUrls')
    // Nothing changed.
    expect((await json(collector, admin('/v1/admin/sources/web/webhooks'))).body.source.webhooks.urls).toEqual([{ url: 'https://hooks.test/in' }])
  })

  it.each(['https://hooks.example.com/in', 'http://8.8.8.8/', 'http://[2606:4700::1111]/', 'http://172.32.0.1/', 'http://100.128.0.1/', 'http://localhost.example.com/'])('%s (public) is saved', async (url) => {
    const { collector } = consoleCollector()
    expect((await json(collector, put(url))).status).toBe(200)
  })

  it("keeps the config's own URLs, private or not: they are the operator's", async () => {
    const { collector } = consoleCollector({
      sources: [{ writeKey: KEY, name: 'web', webhooks: { urls: [{ url: 'http://127.0.0.1:9/hook' }] } }],
    })
    const { status } = await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: 'http://127.0.0.1:9/hook' }], sharedSecret: 'a-new-secret-123456' } }))
    expect(status).toBe(200)
  })

  it('with allowPrivateWebhookUrls, saves a private URL', async () => {
    const { collector } = consoleCollector({ allowPrivateWebhookUrls: true })
    expect((await json(collector, put('http://127.0.0.1:9/hook'))).status).toBe(200)
  })
})

describe('a name that resolves to a private address at delivery (real sockets)', () => {
  let receiver: Server | undefined
  afterEach(() => new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve())))

  /** A receiver on loopback, and `rebind.test` resolving to it (it was public, or unknown, when saved). */
  async function setup(overrides: Partial<CollectorConfig>): Promise<{ collector: Collector; received: () => number; url: string }> {
    let count = 0
    receiver = createServer((req, res) => {
      count++
      req.resume().on('end', () => res.end('ok'))
    })
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))
    const { port } = receiver.address() as AddressInfo
    const real = dns.lookup
    vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, options: object, callback: (...args: unknown[]) => void) => {
      if (hostname !== 'rebind.test') return (real as (...args: unknown[]) => void)(hostname, options, callback)
      const all = (options as { all?: boolean }).all
      if (all) callback(null, [{ address: '127.0.0.1', family: 4 }])
      else callback(null, '127.0.0.1', 4)
    }) as never)
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], adminToken: TOKEN, ...overrides })
    const url = `http://rebind.test:${port}/hook`
    expect((await json(collector, admin('/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url }] } }))).status).toBe(200)
    return { collector, received: () => count, url }
  }

  async function track(collector: Collector): Promise<void> {
    const response = await collector.fetch(new Request('http://collector.test/v1/track', {
      method: 'POST',
      headers: { authorization: basic(KEY), 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'Rebound', userId: 'u1' }),
    }))
    expect(response.status).toBe(200)
  }

  async function firstAttemptError(collector: Collector): Promise<string | undefined> {
    const started = Date.now()
    for (;;) {
      const { body } = await json(collector, admin('/v1/admin/messages'))
      const error = body.messages[0]?.delivery.attempts[0]?.results[0]?.error as string | undefined
      if (error !== undefined || Date.now() - started > 5_000) return error
      await new Promise((resolve) => setImmediate(resolve))
    }
  }

  it.each<[string, Partial<CollectorConfig>]>([
    ['nodeFetch (as the CLI delivers)', { fetch: nodeFetch }],
    ['the default transport', {}],
  ])('%s: refused as it connects; nothing reaches the receiver', async (_, transport) => {
    const { collector, received } = await setup(transport)
    await track(collector)
    const error = await firstAttemptError(collector)
    expect(error).toContain('Refused to connect to rebind.test: it resolves to 127.0.0.1, a loopback address')
    expect(received()).toBe(0)
    await collector.close(0)
  })

  it('with allowPrivateWebhookUrls, the same name is delivered to (the lookup above is the one connected with)', async () => {
    const { collector, received } = await setup({ fetch: nodeFetch, allowPrivateWebhookUrls: true })
    await track(collector)
    await until(() => received() === 1, 'the delivery')
    await collector.close(0)
  })
})
