/**
 * The Node server answers the collector's requests through its direct path (http/direct.ts: a
 * plain request head, JSON answers written from their text) and must answer exactly as the
 * fetch-style handler does. Real sockets; the same requests go to `collector.fetch` directly.
 */
import { gzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createCollector, startServer, type Collector, type CollectorServer } from '../../../src/collector/index.js'
import { KEY, basic, track } from '../helpers.js'

const ADMIN = 'admin-token-for-tests'
const good = JSON.stringify({ batch: [track()] })

interface Case {
  method: string
  path: string
  headers?: Record<string, string>
  body?: string | Buffer
}

const ingest = (body: string | Buffer, headers: Record<string, string> = {}, path = '/v1/batch'): Case => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', authorization: basic(KEY), ...headers },
  body,
})

const cases: Array<[string, Case]> = [
  ['a valid batch', ingest(good)],
  ['a valid batch from a browser origin', ingest(good, { origin: 'https://shop.example' })],
  ['a single track call', ingest(JSON.stringify(track({ messageId: 'm-2' })), {}, '/v1/track')],
  ['a gzip body', ingest(gzipSync(good), { 'content-encoding': 'gzip' })],
  ['the write key in the body (text/plain)', ingest(JSON.stringify({ writeKey: KEY, batch: [track()] }), { 'content-type': 'text/plain', authorization: '' })],
  ['the beacon form', ingest(good, { authorization: '' }, `/beacon/v1/batch?writeKey=${KEY}`)],
  ['analytics.js metrics', ingest('{"series":[]}', {}, '/v1/m')],
  ['invalid JSON', ingest('{"batch":[')],
  ['an invalid message', ingest(JSON.stringify({ batch: [track({ event: undefined })] }))],
  ['an unknown write key', ingest(good, { authorization: basic('nope') })],
  ['a wrong content type', ingest(good, { 'content-type': 'application/xml' })],
  ['an unknown path', ingest(good, {}, '/v2/batch')],
  ['PUT on /v1/batch', { ...ingest(good), method: 'PUT' }],
  ['a preflight', { method: 'OPTIONS', path: '/v1/batch', headers: { origin: 'https://shop.example', 'access-control-request-headers': 'x-extra' } }],
  ['the stats (admin)', { method: 'GET', path: '/v1/stats', headers: { authorization: `Bearer ${ADMIN}` } }],
  ['a deletion request (admin, POST with a body)', { method: 'POST', path: '/v1/deletions', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'u1' }) }],
  ['the admin endpoints without the token', { method: 'POST', path: '/v1/deletions', headers: { 'content-type': 'application/json' }, body: '{}' }],
  ['the console', { method: 'GET', path: '/console' }],
]

/** Headers only a server writes (framing and connection), not the handler's answer. */
const SERVER_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding'])

async function answerOf(response: Response) {
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!SERVER_HEADERS.has(name)) headers[name] = value
  })
  const text = await response.text()
  // A deletion request's answer names its own id: compare its shape.
  return { status: response.status, headers, text: text.replace(/"id":"[^"]+"/g, '"id":"…"') }
}

describe("the Node server's direct path to the collector", () => {
  let collector: Collector
  let server: CollectorServer
  const errors: unknown[] = []
  const RealRequest = globalThis.Request
  let requestsMade = 0

  beforeAll(async () => {
    collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], adminToken: ADMIN, onError: (e) => errors.push(e) })
    server = await startServer(collector, { port: 0, host: '127.0.0.1' })
    // Counts the web `Request`s made in this process from here on (fetch() makes its own internally).
    globalThis.Request = class extends RealRequest {
      constructor(...args: ConstructorParameters<typeof Request>) {
        super(...args)
        requestsMade++
      }
    }
  })
  afterEach(() => {
    expect(errors).toEqual([])
  })
  afterAll(async () => {
    globalThis.Request = RealRequest
    await server.close()
    await collector.close()
  })

  it.each(cases)('answers %s as the fetch handler does', async (_, { method, path, headers = {}, body }) => {
    const init = () => ({ method, headers, ...(body !== undefined && { body: new Uint8Array(body instanceof Buffer ? body : Buffer.from(body)) }) })
    const overSocket = await answerOf(await fetch(`${server.url}${path}`, init()))
    const direct = await answerOf(await collector.fetch(new RealRequest(`${server.url}${path}`, init())))
    expect(overSocket).toEqual(direct)
  })

  it('makes no web Request for an ingest call, and one for an admin call that reads it', async () => {
    requestsMade = 0
    const accepted = await fetch(`${server.url}/v1/batch`, { method: 'POST', headers: ingest(good).headers, body: good })
    expect(accepted.status).toBe(200)
    expect(requestsMade).toBe(0)
    const stats = await fetch(`${server.url}/v1/stats`, { headers: { authorization: `Bearer ${ADMIN}` } })
    expect(stats.status).toBe(200)
    expect(requestsMade).toBe(1)
  })
})
