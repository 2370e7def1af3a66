/**
 * The admin door: wrong tokens limited per client address (429 with Retry-After, one log line per
 * address and window, the right token never counted), the address taken from the socket or, with
 * `trustProxy`, from X-Forwarded-For; the same headers and CORS policy on every admin endpoint; a
 * warning when the admin surface listens beyond loopback over plain HTTP. Fake time for the window.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, startServer, type Collector } from '../../../src/collector/index.js'
import { WINDOW_MS, WRONG_TOKENS_PER_WINDOW } from '../../../src/collector/admin/guard.js'

const TOKEN = 'admin-auth-token-0123456789'

let collector: Collector | undefined
afterEach(async () => {
  vi.useRealTimers()
  vi.restoreAllMocks()
  await collector?.close(0)
  collector = undefined
})

function start(options: { trustProxy?: boolean; debug?: boolean } = {}): Collector {
  collector = createCollector({ sources: [{ writeKey: 'K1', name: 'web' }], adminToken: TOKEN, ...options })
  return collector
}

function stats(token: string | undefined, headers: Record<string, string> = {}): Request {
  return new Request('http://collector.test/v1/stats', { headers: { ...(token !== undefined && { authorization: `Bearer ${token}` }), ...headers } })
}

async function statuses(c: Collector, count: number, request: () => Request): Promise<number[]> {
  const answers: number[] = []
  for (let i = 0; i < count; i++) answers.push((await c.fetch(request())).status)
  return answers
}

describe('wrong admin tokens, limited per client address', () => {
  it(`answers ${WRONG_TOKENS_PER_WINDOW} wrong tokens 401, then 429 with Retry-After (any token) until the window ends`, async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const c = start()
    expect(await statuses(c, WRONG_TOKENS_PER_WINDOW, () => stats('wrong-token-0123456789'))).toEqual(Array(WRONG_TOKENS_PER_WINDOW).fill(401))
    // The right token after ten wrong ones: not limited yet.
    expect((await c.fetch(stats(TOKEN))).status).toBe(200)
    const limited = await c.fetch(stats('wrong-token-0123456789'))
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe(String(WINDOW_MS / 1000))
    expect(await limited.json()).toEqual({ success: false, error: { code: 'TOO_MANY_ATTEMPTS', message: `Too many wrong admin tokens from this address; retry in ${WINDOW_MS / 1000} s.` } })
    // Limited, a right token is refused too: else a 200 among 429s would tell which guess was right.
    expect((await c.fetch(stats(TOKEN))).status).toBe(429)
    // So is a missing one, and every admin endpoint (one limit for all).
    expect((await c.fetch(stats(undefined))).status).toBe(429)
    const console = await c.fetch(new Request('http://collector.test/v1/admin/sources', { headers: { authorization: `Bearer ${TOKEN}` } }))
    expect(console.status).toBe(429)
    vi.advanceTimersByTime(WINDOW_MS - 20_000)
    expect((await c.fetch(stats('wrong'))).headers.get('retry-after')).toBe('20')
    vi.advanceTimersByTime(20_000)
    expect((await c.fetch(stats(TOKEN))).status).toBe(200)
    expect((await c.fetch(stats('wrong'))).status).toBe(401)
  })

  it('never counts the right token: a busy console or script is never limited', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const c = start()
    expect(new Set(await statuses(c, 200, () => stats(TOKEN)))).toEqual(new Set([200]))
    expect(await statuses(c, WRONG_TOKENS_PER_WINDOW + 1, () => stats('nope'))).toEqual([...Array(WRONG_TOKENS_PER_WINDOW).fill(401), 429])
  })

  it('logs one line per address and window, without the token sent', async () => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')))
    const c = start({ debug: true })
    const guess = 'guessed-token-ABCDEFGHIJ'
    await statuses(c, 30, () => stats(guess))
    const limitLines = () => lines.filter((line) => line.includes('wrong admin tokens'))
    expect(limitLines()).toHaveLength(1)
    expect(limitLines()[0]).toMatch(/admin: unknown sent more than 10 wrong admin tokens within 60 s; answered 429 until /)
    vi.advanceTimersByTime(WINDOW_MS)
    await statuses(c, 30, () => stats(guess))
    expect(limitLines()).toHaveLength(2)
    expect(lines.join('\n')).not.toContain(guess)
    expect(lines.join('\n')).not.toContain(TOKEN)
  })

  it('never logs the admin token, not even its end, when it is sent in a URL (?authorization=Bearer …)', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')))
    const c = start({ debug: true })
    for (const path of ['/v1/stats', '/v1/batch', '/v1/admin/sources']) {
      for (const query of [`authorization=Bearer%20${TOKEN}`, `authorization=Bearer+${TOKEN}`, `access_token=${TOKEN}`, `q=Bearer%20${TOKEN}`]) {
        expect((await c.fetch(new Request(`http://collector.test${path}?${query}`, { method: path === '/v1/batch' ? 'POST' : 'GET', body: path === '/v1/batch' ? '{}' : null }))).status).toBe(401)
      }
    }
    expect(lines.length).toBeGreaterThanOrEqual(12)
    expect(lines.join('\n')).not.toContain(TOKEN)
    expect(lines.join('\n')).not.toContain(encodeURIComponent(TOKEN))
    expect(lines.filter((line) => line.includes('authorization=')).every((line) => line.includes('authorization=…') && !line.includes(TOKEN.slice(-4)))).toBe(true)
  })

  it('with trustProxy, counts per address in X-Forwarded-For (the last one, the one the proxy appended)', async () => {
    const c = start({ trustProxy: true })
    const from = (address: string) => () => stats('wrong', { 'x-forwarded-for': `6.6.6.6, ${address}` })
    expect((await statuses(c, WRONG_TOKENS_PER_WINDOW + 1, from('203.0.113.1'))).at(-1)).toBe(429)
    // Another client behind the proxy is not held up, and the first entry (the client's own words) does not count.
    expect((await c.fetch(from('203.0.113.2')())).status).toBe(401)
    expect((await c.fetch(stats(TOKEN, { 'x-forwarded-for': '203.0.113.2' }))).status).toBe(200)
  })

  it('without trustProxy, counts per socket peer: X-Forwarded-For changes nothing (real sockets)', async () => {
    const c = start()
    const server = await startServer(c, { port: 0, host: '127.0.0.1' })
    try {
      const answers: number[] = []
      for (let i = 0; i <= WRONG_TOKENS_PER_WINDOW; i++) {
        answers.push((await fetch(`${server.url}/v1/stats`, { headers: { authorization: 'Bearer wrong', 'x-forwarded-for': `198.51.100.${i}` } })).status)
      }
      expect(answers).toEqual([...Array(WRONG_TOKENS_PER_WINDOW).fill(401), 429])
      // A request made in this process without a socket is another "address": not limited by the socket's.
      expect((await c.fetch(stats(TOKEN))).status).toBe(200)
    } finally {
      await server.close()
    }
  })
})

describe('every admin answer', () => {
  const ADMIN_ANSWERS: Array<[string, () => Request]> = [
    ['GET /v1/stats', () => stats(TOKEN)],
    ['GET /v1/stats without a token', () => stats(undefined)],
    ['POST /v1/deletions', () => new Request('http://collector.test/v1/deletions', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.test' }, body: '{"userId":"u1"}' })],
    ['POST /v1/audiences (a 400)', () => new Request('http://collector.test/v1/audiences', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.test' }, body: '{}' })],
    ['GET /v1/admin/sources', () => new Request('http://collector.test/v1/admin/sources', { headers: { authorization: `Bearer ${TOKEN}`, origin: 'https://evil.test' } })],
    ['GET /v1/admin/messages', () => new Request('http://collector.test/v1/admin/messages', { headers: { authorization: `Bearer ${TOKEN}` } })],
    ['GET /v1/admin/nothing (a 404)', () => new Request('http://collector.test/v1/admin/nothing', { headers: { authorization: `Bearer ${TOKEN}` } })],
    ['GET /v1/admin/sources without a token', () => new Request('http://collector.test/v1/admin/sources', { headers: { origin: 'https://evil.test' } })],
  ]

  it.each(ADMIN_ANSWERS)('%s: Cache-Control no-store, nosniff, no CORS headers', async (_, request) => {
    const c = start()
    const answer = await c.fetch(request())
    expect(answer.headers.get('cache-control')).toBe('no-store')
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff')
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
  })

  it.each(['/v1/deletions', '/v1/audiences', '/v1/stats', '/v1/admin/sources'])('refuses a CORS preflight to %s, as to /v1/admin/*', async (path) => {
    const c = start()
    const answer = await c.fetch(new Request(`http://collector.test${path}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    }))
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('leaves ingest as it was: any origin may send', async () => {
    const c = start()
    const answer = await c.fetch(new Request('http://collector.test/v1/batch', { method: 'OPTIONS', headers: { origin: 'https://shop.test' } }))
    expect(answer.status).toBe(204)
    expect(answer.headers.get('access-control-allow-origin')).toBe('https://shop.test')
  })
})

describe('start-up warning', () => {
  it.each<[string, string, boolean, boolean]>([
    ['admin on every interface', '0.0.0.0', true, true],
    ['admin on loopback', '127.0.0.1', true, false],
    ['no admin token, every interface', '0.0.0.0', false, false],
  ])('%s: warned %s', async (_, host, admin, warned) => {
    const warnings: string[] = []
    vi.spyOn(console, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)))
    collector = createCollector({ sources: [{ writeKey: 'K1', name: 'web' }], ...(admin && { adminToken: TOKEN }) })
    const server = await startServer(collector, { port: 0, host })
    await server.close()
    expect(warnings).toHaveLength(warned ? 1 : 0)
    if (warned) expect(warnings[0]).toMatch(/the console and admin endpoints are served over plain HTTP at http:\/\/0\.0\.0\.0:\d+, reachable beyond this machine .*TLS-terminating reverse proxy/)
  })
})

describe('unsafeShortAdminToken', () => {
  it('accepts a short token when asked, for tests', async () => {
    const c = createCollector({ sources: [{ writeKey: 'K1', name: 'web' }], adminToken: 'tok', unsafeShortAdminToken: true })
    collector = c
    expect((await c.fetch(stats('tok'))).status).toBe(200)
  })
})
