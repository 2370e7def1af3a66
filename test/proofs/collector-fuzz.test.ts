/**
 * The collector's HTTP surface fuzzed (issue 45): random requests to every ingest path, every
 * admin endpoint (`/v1/deletions`, `/v1/audiences`, `/v1/stats`) and every console endpoint
 * (`/v1/admin/…`), and paths nobody routes: random methods, credentials (none, right, wrong,
 * malformed), content types, content encodings (identity, gzip, deflate, unknown ones, a chain),
 * query strings and bodies (random bytes, random JSON, near-valid batches and settings, valid and
 * broken gzip, sizes up to past the 500 KiB limit). The handler is called as a function, as a
 * server calls it. Never a 5xx, never a rejection, every answer a JSON error with a code when it
 * is not a 2xx; and a good batch sent at the same time as each fuzzed request is answered 200
 * and delivered. Fixed seed and budget (`FUZZ_RUNS`, `FUZZ_SEED`: docs/contributing.md).
 */
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { basic, KEY, post, track, until } from '../collector/helpers.js'
import { closeCollectors, consoleCollector, TOKEN } from '../collector/console/support.js'
import { fcParameters, fuzzTimeout } from './support.js'

afterEach(closeCollectors)

const INGEST = ['/v1/batch', '/v1/b', '/v1/import', '/beacon/v1/batch', '/v1/m', '/v1/identify', '/v1/track', '/v1/page', '/v1/screen', '/v1/group', '/v1/alias', '/v1/t', '/v1/i', '/v1/p', '/v1/s', '/v1/g', '/v1/a']
const ADMIN = ['/v1/deletions', '/v1/audiences', '/v1/stats']
const CONSOLE = ['/v1/admin/sources', '/v1/admin/sources/app/webhooks', '/v1/admin/sources/%E0%A4%A/webhooks', '/v1/admin/sources/nope/webhooks', '/v1/admin/messages', '/v1/admin/messages/stream', '/v1/admin/messages/1', '/v1/admin/messages/1/retry', '/v1/admin/messages/99999999999999999999/retry', '/v1/admin/audiences', '/v1/admin/activity', '/console', '/console/app.js']

const path = fc.oneof(
  { arbitrary: fc.constantFrom(...INGEST, ...ADMIN, ...CONSOLE), weight: 8 },
  { arbitrary: fc.webPath(), weight: 1 },
  { arbitrary: fc.constantFrom(...INGEST, ...ADMIN, ...CONSOLE).map((p) => `/${p}//`), weight: 1 },
)

const query = fc.dictionary(
  fc.oneof(fc.constantFrom('writeKey', 'since', 'cursor', 'limit', 'type', 'event', 'userId', 'anonymousId', 'outcome', 'source', 'audience', 'authorization'), fc.string({ maxLength: 8 })),
  fc.oneof(fc.string({ maxLength: 20 }), fc.integer().map(String), fc.constantFrom('', '-1', '1e400', 'NaN', '%', 'Bearer x')),
  { maxKeys: 4 },
)

const authorization = fc.oneof(
  fc.constant(undefined),
  fc.constant(basic(KEY)),
  fc.constant(`Bearer ${TOKEN}`),
  fc.constant(basic('wrong')),
  fc.constant('Bearer wrong-token-0000000000'),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('Basic', 'Basic !!!', 'Bearer', `Basic ${btoa('\u00ff\u00fe')}`, `bearer ${TOKEN}`),
)

/** A message that is nearly valid: the right keys, with values of any kind. */
const nearMessage = fc.record({
  type: fc.oneof(fc.constantFrom('track', 'identify', 'page', 'screen', 'group', 'alias', 'delete', ''), fc.jsonValue()),
  event: fc.oneof(fc.string(), fc.jsonValue()),
  userId: fc.oneof(fc.string(), fc.integer(), fc.jsonValue()),
  anonymousId: fc.jsonValue(),
  messageId: fc.oneof(fc.string(), fc.jsonValue()),
  timestamp: fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.string(), fc.jsonValue()),
  properties: fc.jsonValue(),
  traits: fc.jsonValue(),
  context: fc.jsonValue(),
  previousId: fc.jsonValue(),
  groupId: fc.jsonValue(),
}, { requiredKeys: [] })

/** Settings, deletions and audience syncs that are nearly valid. */
const nearAdmin = fc.record({
  enabled: fc.jsonValue(),
  urls: fc.oneof(fc.array(fc.record({ url: fc.oneof(fc.webUrl(), fc.string(), fc.constantFrom('http://127.0.0.1/x', 'http://0x7f000001/', 'https://hooks.example.com/in')), headers: fc.dictionary(fc.string({ maxLength: 20 }), fc.oneof(fc.string(), fc.jsonValue())) }, { requiredKeys: ['url'] }), { maxLength: 3 }), fc.jsonValue()),
  sharedSecret: fc.oneof(fc.string(), fc.jsonValue()),
  userId: fc.oneof(fc.string(), fc.jsonValue()),
  source: fc.oneof(fc.constantFrom('web', 'app', 'nope'), fc.jsonValue()),
  audience: fc.oneof(fc.string(), fc.jsonValue()),
  members: fc.oneof(fc.array(fc.string(), { maxLength: 5 }), fc.jsonValue()),
  sources: fc.jsonValue(),
}, { requiredKeys: [] })

const text = fc.oneof(
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.array(nearMessage, { maxLength: 4 }).map((batch) => JSON.stringify({ batch, sentAt: new Date().toISOString() })),
  nearMessage.map((m) => JSON.stringify(m)),
  nearAdmin.map((m) => JSON.stringify(m)),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom('', '{', '{"batch":', '{"batch":[{}]', '[]', 'null', '{"__proto__":{"x":1}}', '{"batch":[{"type":"track","event":"E","userId":"u","properties":{"n":1e400}}]}', '{"batch":[{"type":"track","event":"E","userId":"u","properties":{"n":123456789012345678901234567890}}]}'),
)

type Body = { bytes: Uint8Array<ArrayBuffer>; encoding?: string }

const body: fc.Arbitrary<Body> = fc.oneof(
  { arbitrary: text.map((t) => ({ bytes: new TextEncoder().encode(t) })), weight: 5 },
  { arbitrary: fc.uint8Array({ maxLength: 2_000 }).map((bytes) => ({ bytes: new Uint8Array(bytes) })), weight: 2 },
  { arbitrary: text.map((t) => ({ bytes: new Uint8Array(gzipSync(t)), encoding: 'gzip' })), weight: 2 },
  // Broken gzip: a valid stream cut short or with a byte changed; random bytes behind a gzip header.
  { arbitrary: fc.tuple(text, fc.nat(), fc.boolean()).map(([t, at, cut]) => {
    const bytes = new Uint8Array(gzipSync(t))
    if (cut) return { bytes: bytes.slice(0, at % bytes.length), encoding: 'gzip' }
    bytes[at % bytes.length] ^= 0xff
    return { bytes, encoding: 'gzip' }
  }), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => ({ bytes: new Uint8Array([0x1f, 0x8b, 8, 0, ...b]), encoding: 'gzip' })), weight: 1 },
  // Sizes: near and past the 500 KiB limit, plain and as a gzip bomb.
  { arbitrary: fc.integer({ min: 400 * 1024, max: 700 * 1024 }).map((n) => ({ bytes: new TextEncoder().encode(`{"batch":[{"type":"track","event":"E","userId":"u","properties":{"s":"${'x'.repeat(n)}"}}]}`) })), weight: 1 },
  { arbitrary: fc.integer({ min: 600 * 1024, max: 4 * 1024 * 1024 }).map((n) => ({ bytes: new Uint8Array(gzipSync(' '.repeat(n))), encoding: 'gzip' })), weight: 1 },
)

const request = fc.record({
  path,
  query,
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
  authorization,
  contentType: fc.option(fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', '*/*', 'application/json; charset=latin1'), { nil: undefined }),
  // The encoding the body was made with, another, or a header the body does not match.
  encoding: fc.constantFrom('as made', 'as made', 'as made', 'identity', 'gzip', 'deflate', 'br', 'x-gzip', 'gzip, gzip', 'GZIP', 'zstd', ''),
  origin: fc.option(fc.constantFrom('https://evil.example', 'null', 'http://collector.test'), { nil: undefined }),
  body,
})

/** Each endpoint with its method and credentials right, so the fuzz reaches what parses the body and query. */
const ROUTES: ReadonlyArray<{ path: string; method: string; authorization: string }> = [
  ...INGEST.filter((p) => p !== '/beacon/v1/batch').map((path) => ({ path, method: 'POST', authorization: basic(KEY) })),
  { path: `/beacon/v1/batch?writeKey=${KEY}`, method: 'POST', authorization: '' },
  { path: '/v1/deletions', method: 'POST', authorization: `Bearer ${TOKEN}` },
  { path: '/v1/audiences', method: 'POST', authorization: `Bearer ${TOKEN}` },
  { path: '/v1/stats', method: 'GET', authorization: `Bearer ${TOKEN}` },
  ...['/v1/admin/sources', '/v1/admin/sources/app/webhooks', '/v1/admin/messages', '/v1/admin/messages/stream', '/v1/admin/messages/1', '/v1/admin/audiences', '/v1/admin/activity']
    .map((path) => ({ path, method: 'GET', authorization: `Bearer ${TOKEN}` })),
  { path: '/v1/admin/sources/app/webhooks', method: 'PUT', authorization: `Bearer ${TOKEN}` },
  { path: '/v1/admin/messages/1/retry', method: 'POST', authorization: `Bearer ${TOKEN}` },
]

const deepRequest = fc.record({
  route: fc.constantFrom(...ROUTES),
  query,
  contentType: fc.option(fc.constantFrom('application/json', 'text/plain'), { nil: undefined }),
  encoding: fc.constantFrom('as made', 'as made', 'as made', 'identity', 'gzip', 'deflate', 'br'),
  body,
}).map(({ route, ...rest }) => ({
  ...rest,
  path: route.path.split('?')[0],
  query: { ...rest.query, ...Object.fromEntries(new URLSearchParams(route.path.split('?')[1] ?? '')) },
  method: route.method,
  authorization: route.authorization || undefined,
  origin: undefined,
}))

function toRequest(r: Fuzzed, address: string): Request {
  const url = new URL(`http://collector.test${r.path}`)
  for (const [k, v] of Object.entries(r.query)) url.searchParams.set(k, v)
  const headers = new Headers()
  if (r.authorization !== undefined) headers.set('authorization', r.authorization.replace(/[\r\n\0]/g, ''))
  if (r.contentType) headers.set('content-type', r.contentType)
  const encoding = r.encoding === 'as made' ? r.body.encoding : r.encoding
  if (encoding !== undefined) headers.set('content-encoding', encoding)
  if (r.origin) headers.set('origin', r.origin)
  headers.set('x-forwarded-for', address)
  const hasBody = r.method !== 'GET' && r.method !== 'HEAD'
  return new Request(url, { method: r.method, headers, ...(hasBody && { body: r.body.bytes }) })
}

/** The answer's body: read whole, except a stream (the console's live view), which is cancelled. */
async function readAnswer(response: Response): Promise<string> {
  if ((response.headers.get('content-type') ?? '').includes('event-stream')) {
    await response.body?.cancel()
    return ''
  }
  return response.text()
}

/** A request as generated, before it is made a `Request`. */
interface Fuzzed {
  path: string
  query: Record<string, string>
  method: string
  authorization: string | undefined
  contentType: string | undefined
  encoding: string
  origin: string | undefined
  body: Body
}

/**
 * Sends each of `requests` to a fresh collector beside a good batch: the fuzzed answer is below
 * 500 (and a named JSON error when a refusal), the good one 200, and every good message is
 * delivered at the end. Returns the fuzzed answers' statuses, counted.
 */
async function fuzz(requests: fc.Arbitrary<Fuzzed>, runs: number): Promise<Map<number, number>> {
  // Each request from its own address (X-Forwarded-For, trusted): else the wrong tokens among
  // them would have the one address answered 429 whatever it sends, right token included.
  const { collector, calls } = consoleCollector({ trustProxy: true })
  const good: string[] = []
  let n = 0
  const seen = new Map<number, number>()
  await fc.assert(
    fc.asyncProperty(requests, async (r) => {
      const id = `good-${n++}`
      good.push(id)
      const [fuzzed, ok] = await Promise.all([
        collector.fetch(toRequest(r, `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`)),
        collector.fetch(post({ batch: [track({ messageId: id, userId: `u-${id}` })] })),
      ])
      const text = await readAnswer(fuzzed)
      seen.set(fuzzed.status, (seen.get(fuzzed.status) ?? 0) + 1)
      expect(fuzzed.status, `${r.method} ${r.path}: ${text.slice(0, 300)}`).toBeLessThan(500)
      if (fuzzed.status >= 400 && r.method !== 'HEAD') {
        const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error
        expect(error?.code, text.slice(0, 300)).toMatch(/^[A-Z_]+$/)
        expect(typeof error?.message).toBe('string')
      }
      expect([ok.status, await ok.text()]).toEqual([200, '{"success":true}'])
    }),
    fcParameters(runs, 30_000),
  )
  // Every good message reached the webhook, whatever was sent beside it.
  const delivered = () => new Set(calls.map((c) => c.json.messageId))
  await until(() => good.every((id) => delivered().has(id)), 'every good message delivered', 15_000)
  return seen
}

describe('the collector fuzzed', () => {
  it('at its front door (any path, method, credentials): never a 5xx or a rejection, refusals named, good batches beside delivered', async () => {
    const seen = await fuzz(request, 150)
    // Refusals of several kinds: the fuzzer got past the router.
    expect([...seen.keys()].filter((s) => s >= 400).length).toBeGreaterThan(4)
  }, fuzzTimeout(30_000))

  it('behind the door (each endpoint, right method and credentials, any body, query, encoding): the same', async () => {
    const seen = await fuzz(deepRequest, 150)
    // Bodies the endpoints took and bodies they refused, for reasons of several kinds.
    expect([...seen.keys()].some((s) => s === 200)).toBe(true)
    expect([...seen.keys()].filter((s) => s >= 400).length).toBeGreaterThan(2)
  }, fuzzTimeout(30_000))
})
