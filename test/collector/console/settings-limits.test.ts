/**
 * Limits on what the console and the admin API may save (issue 45: a 400 KB webhook URL was
 * accepted, and 100 events then took the collector from 83 to 328 MB): URL length, header count,
 * header value size and secret size, each a 400 naming the field; hop-by-hop, body-framing and
 * proxy headers, and `__proto__` (shown as saved, never sent), refused with a clear message.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { WEBHOOK_LIMITS } from '../../../src/webhooks/options.js'
import { closeCollectors, consoleCollector, json, TOKEN } from './support.js'

afterEach(closeCollectors)

const URL_0 = 'sources[0].webhooks.urls[0]'
const put = (body: string) => new Request('http://collector.test/v1/admin/sources/web/webhooks', {
  method: 'PUT',
  headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
  body,
})
const withHeaders = (headers: Record<string, string>) => JSON.stringify({ urls: [{ url: 'https://hooks.test/in', headers }] })

describe('settings saved through the admin API', () => {
  it.each<[string, string, string, RegExp]>([
    ['a URL over the length limit', JSON.stringify({ urls: [{ url: `https://hooks.test/${'a'.repeat(WEBHOOK_LIMITS.urlLength)}` }] }), `${URL_0}.url`, new RegExp(`to be at most ${WEBHOOK_LIMITS.urlLength} characters long, got ${WEBHOOK_LIMITS.urlLength + 19}`)],
    ['a 400 KB URL', JSON.stringify({ urls: [{ url: `https://hooks.test/?q=${'x'.repeat(400_000)}` }] }), `${URL_0}.url`, /at most 4096 characters long, got 400022\.$/],
    ['too many headers', withHeaders(Object.fromEntries(Array.from({ length: WEBHOOK_LIMITS.headers + 1 }, (_, i) => [`X-H${i}`, 'v']))), `${URL_0}.headers`, new RegExp(`at most ${WEBHOOK_LIMITS.headers} headers, got ${WEBHOOK_LIMITS.headers + 1}`)],
    ['a header value over the size limit', withHeaders({ 'X-Big': 'v'.repeat(WEBHOOK_LIMITS.headerValueLength + 1) }), `${URL_0}.headers`, /`sources\[0\]\.webhooks\.urls\[0\]\.headers\["X-Big"\]` to be at most 4096 characters long, got 4097/],
    ['a shared secret over the size limit', JSON.stringify({ sharedSecret: 's'.repeat(WEBHOOK_LIMITS.secretLength + 1) }), 'sources[0].webhooks.sharedSecret', /at most 1024 characters long, got 1025\. \(The value is not shown/],
    ['Host', withHeaders({ Host: 'internal.test' }), `${URL_0}.headers`, /Header `Host` .* is managed by the HTTP connection/],
    ['Connection', withHeaders({ Connection: 'close' }), `${URL_0}.headers`, /Header `Connection` .* managed by the HTTP connection/],
    ['Upgrade', withHeaders({ Upgrade: 'websocket' }), `${URL_0}.headers`, /Header `Upgrade` .* managed by the HTTP connection/],
    ['TE', withHeaders({ TE: 'trailers' }), `${URL_0}.headers`, /Header `TE` .* managed by the HTTP connection/],
    ['Expect', withHeaders({ Expect: '100-continue' }), `${URL_0}.headers`, /Header `Expect` .* managed by the HTTP connection/],
    ['Content-Length', withHeaders({ 'Content-Length': '5' }), `${URL_0}.headers`, /Header `Content-Length` .* managed by the HTTP connection/],
    ['Transfer-Encoding', withHeaders({ 'Transfer-Encoding': 'chunked' }), `${URL_0}.headers`, /Header `Transfer-Encoding` .* managed by the HTTP connection/],
    ['Content-Encoding on a plain body', withHeaders({ 'Content-Encoding': 'gzip' }), `${URL_0}.headers`, /Header `Content-Encoding` .* body framing/],
    ['Proxy-Authorization', withHeaders({ 'Proxy-Authorization': 'Basic eDp5' }), `${URL_0}.headers`, /Header `Proxy-Authorization` .* a proxy's/],
    ['Proxy-Connection', withHeaders({ 'proxy-connection': 'keep-alive' }), `${URL_0}.headers`, /Header `proxy-connection` .* managed by the HTTP connection/],
    ['__proto__', '{"urls":[{"url":"https://hooks.test/in","headers":{"__proto__":"x"}}]}', `${URL_0}.headers`, /Header `__proto__` .* is not a header name a receiver would get/],
  ])('%s: a 400 naming the field', async (_, body, field, message) => {
    const { collector } = consoleCollector()
    const { status, body: answer } = await json(collector, put(body))
    expect(status).toBe(400)
    expect(answer.error.field).toBe(field)
    expect(answer.error.message).toMatch(message)
    expect(answer.error.message.length).toBeLessThan(1_000)
  })

  it('takes settings at the limits', async () => {
    const { collector } = consoleCollector()
    const url = `https://hooks.test/${'a'.repeat(WEBHOOK_LIMITS.urlLength - 19)}`
    const headers = Object.fromEntries(Array.from({ length: WEBHOOK_LIMITS.headers }, (_, i) => [`X-H${i}`, 'v'.repeat(WEBHOOK_LIMITS.headerValueLength)]))
    const { status } = await json(collector, put(JSON.stringify({ urls: [{ url, headers }], sharedSecret: 's'.repeat(WEBHOOK_LIMITS.secretLength) })))
    expect(status).toBe(200)
  })
})
