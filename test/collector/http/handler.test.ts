import { describe, expect, it } from 'vitest'
import { createCollector } from '../../../src/collector/index.js'
import { KEY, basic, forwardingCollector, post, track, until } from '../helpers.js'

const plain = () => createCollector({ sources: [{ writeKey: KEY, name: 'web' }] })

async function answer(response: Response) {
  return { status: response.status, body: (await response.json()) as Record<string, any> }
}

describe('POST /v1/batch', () => {
  it('accepts a valid batch with 200 {"success":true}', async () => {
    const collector = plain()
    const response = await collector.fetch(post({ batch: [track()], sentAt: new Date().toISOString() }))
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('{"success":true}')
    expect(response.headers.get('content-type')).toMatch(/^application\/json/)
    expect(collector.stats()).toMatchObject({ requests: 1, received: 1, rejected: 0, skipped: 1 })
  })

  it('accepts an empty batch', async () => {
    expect((await plain().fetch(post({ batch: [] }))).status).toBe(200)
  })

  it('accepts what @segment/analytics-node sends, and forwards the whole message but its writeKey', async () => {
    const { collector, calls } = forwardingCollector()
    const body = {
      batch: [
        {
          type: 'track',
          event: 'Order Completed',
          userId: 'u9',
          properties: { total: 30 },
          context: { library: { name: '@segment/analytics-node', version: '2.1.0' } },
          _metadata: { nodeVersion: '20.0.0', jsRuntime: 'node' },
          integrations: {},
          messageId: 'node-next-1700000000000-abc',
          timestamp: '2026-11-22T10:00:00.123Z',
          futureField: [1, 2],
        },
      ],
      writeKey: KEY,
      sentAt: '2026-11-22T10:00:01.000Z',
    }
    const response = await collector.fetch(post(body, { key: null }))
    expect(response.status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].json).toMatchObject({
      version: 1,
      type: 'track',
      event: 'Order Completed',
      userId: 'u9',
      messageId: 'node-next-1700000000000-abc',
      timestamp: '2026-11-22T10:00:00.123Z',
      properties: { total: 30 },
      context: { library: { name: '@segment/analytics-node', version: '2.1.0' } },
      _metadata: { nodeVersion: '20.0.0', jsRuntime: 'node' },
      integrations: {},
      futureField: [1, 2],
      sentAt: '2026-11-22T10:00:01.000Z',
    })
    const forwarded = calls[0].json as Record<string, unknown>
    expect(forwarded.receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(forwarded).not.toHaveProperty('writeKey')
    expect(Object.keys(forwarded).slice(-5)).toEqual(['_metadata', 'integrations', 'futureField', 'sentAt', 'receivedAt'])
  })

  it('merges the envelope context under each message context (the message wins)', async () => {
    const { collector, calls } = forwardingCollector()
    const body = {
      batch: [
        track({ messageId: 'a', context: { ip: '10.0.0.1', library: { version: '9' } } }),
        track({ messageId: 'b' }),
      ],
      context: { library: { name: 'isomorphic-analytics', version: '0.1.0' }, locale: 'fr' },
    }
    expect((await collector.fetch(post(body))).status).toBe(200)
    await until(() => calls.length === 2, 'deliveries')
    const byId = Object.fromEntries(calls.map((c) => [c.json.messageId, c.json]))
    expect(byId.a.context).toEqual({ ip: '10.0.0.1', locale: 'fr', library: { name: 'isomorphic-analytics', version: '9' } })
    expect(byId.b.context).toEqual({ locale: 'fr', library: { name: 'isomorphic-analytics', version: '0.1.0' } })
  })

  it('fills timestamp and messageId when absent, and stamps receivedAt', async () => {
    const { collector, calls } = forwardingCollector()
    const before = Date.now()
    await collector.fetch(post({ batch: [{ type: 'identify', userId: 'u1', traits: { a: 1 } }] }))
    await until(() => calls.length === 1, 'delivery')
    const payload = calls[0].json
    expect(Date.parse(payload.timestamp as string)).toBeGreaterThanOrEqual(before - 1)
    expect(payload.messageId).toMatch(/^[0-9a-f-]{36}$/)
  })
})

describe('single calls', () => {
  it.each([
    ['identify', { userId: 'u1', traits: { plan: 'pro' } }],
    ['track', { userId: 'u1', event: 'Clicked' }],
    ['page', { anonymousId: 'a1', name: 'Home' }],
    ['screen', { userId: 'u1', name: 'Settings' }],
    ['group', { userId: 'u1', groupId: 'g1' }],
    ['alias', { userId: 'u1', previousId: 'a1' }],
  ])('POST /v1/%s is forwarded as a %s payload', async (type, message) => {
    const { collector, calls } = forwardingCollector()
    const response = await collector.fetch(post(message, { path: `/v1/${type}` }))
    expect(response.status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].json).toMatchObject({ type, ...message })
  })

  it('accepts the analytics.js short paths, a trailing slash and a doubled one', async () => {
    const collector = plain()
    expect((await collector.fetch(post({ userId: 'u', event: 'E' }, { path: '/v1/t' }))).status).toBe(200)
    expect((await collector.fetch(post({ batch: [track()] }, { path: '/v1/batch/' }))).status).toBe(200)
    // analytics-go given `Endpoint: "http://localhost:8700/"` posts to `//v1/batch`.
    expect((await collector.fetch(post({ batch: [track()] }, { path: '//v1/batch' }))).status).toBe(200)
    expect((await collector.fetch(post({ batch: [track()] }, { path: '/v1//import/' }))).status).toBe(200)
  })

  it('refuses a body whose type contradicts the path', async () => {
    const { status, body } = await answer(await plain().fetch(post({ type: 'identify', userId: 'u' }, { path: '/v1/track' })))
    expect(status).toBe(400)
    expect(body.error.field).toBe('type')
  })

  it('validates a single call with the exact Go v2 message', async () => {
    const { status, body } = await answer(await plain().fetch(post({ userId: 'u1' }, { path: '/v1/track' })))
    expect(status).toBe(400)
    expect(body).toEqual({ success: false, error: { code: 'VALIDATION', message: "You must pass 'event'.", field: 'event' } })
  })
})

describe('validation: one bad message refuses the whole batch, naming it', () => {
  it.each([
    [[track(), track({ event: undefined })], "You must pass 'event'.", 'batch[1].event'],
    [[{ type: 'identify', traits: {} }], "You must pass either an 'anonymousId' or 'userId'.", 'batch[0].userId'],
    [[{ type: 'group', userId: 'u' }], "You must pass a 'groupId'.", 'batch[0].groupId'],
    [[{ type: 'alias', previousId: 'p' }], "You must pass a 'userId'.", 'batch[0].userId'],
    [[{ type: 'alias', userId: 'u' }], "You must pass a 'previousId'.", 'batch[0].previousId'],
    [[track({ properties: [1] })], 'Expected `properties` to be an object, got an array.', 'batch[0].properties'],
    [[track({ timestamp: 'yesterday' })], 'Expected `timestamp` to be a valid Date or ISO 8601 string, got `"yesterday"`.', 'batch[0].timestamp'],
  ])('%j → 400 %s', async (batch, message, field) => {
    const collector = plain()
    const { status, body } = await answer(await collector.fetch(post({ batch })))
    expect(status).toBe(400)
    expect(body.success).toBe(false)
    expect(body.error).toEqual({ code: 'VALIDATION', message, field })
    expect(collector.stats()).toMatchObject({ received: 0, rejected: 1 })
  })

  it('names an unknown type', async () => {
    const { status, body } = await answer(await plain().fetch(post({ batch: [track(), { type: 'purchase', userId: 'u' }] })))
    expect(status).toBe(400)
    expect(body.error.field).toBe('batch[1].type')
    expect(body.error.message).toContain('`"purchase"`')
  })

  it('refuses a message over 32,768 bytes (32 KiB), naming it', async () => {
    const big = track({ properties: { blob: 'x'.repeat(32_768) } })
    const { status, body } = await answer(await plain().fetch(post({ batch: [track(), big] })))
    expect(status).toBe(400)
    expect(body.error.code).toBe('MESSAGE_TOO_LARGE')
    expect(body.error.field).toBe('batch[1]')
  })

  it('refuses a message over 32,768 bytes made so by its numbers (a short body: `1e20` is written back as 21 digits)', async () => {
    const text = `{"batch":[${JSON.stringify(track()).slice(0, -1)},"n":[${Array(1_600).fill('1e20').join(',')}]}]}`
    expect(text.length).toBeLessThan(10_000)
    const { status, body } = await answer(await plain().fetch(post(text)))
    expect(status).toBe(400)
    expect(body.error).toMatchObject({ code: 'MESSAGE_TOO_LARGE', field: 'batch[0]' })
  })

  it('refuses a message nested too deep in a short body', async () => {
    const text = `{"batch":[${JSON.stringify(track()).slice(0, -1)},"n":${'['.repeat(120)}${']'.repeat(120)}}]}`
    const { status, body } = await answer(await plain().fetch(post(text)))
    expect(status).toBe(400)
    expect(body.error.code).toBe('VALIDATION')
  })

  it("accepts a message of exactly 32,768 bytes (the service's 32 KiB: the Node SDKs send up to it)", async () => {
    const base = JSON.stringify(track({ properties: { blob: '' } })).length
    const exact = track({ properties: { blob: 'x'.repeat(32_768 - base) } })
    expect(JSON.stringify(exact).length).toBe(32_768)
    expect((await plain().fetch(post({ batch: [exact] }))).status).toBe(200)
  })

  it.each([
    ['invalid JSON', '{"batch": [', 400, 'INVALID_JSON', 'body'],
    ['an empty body', '', 400, 'INVALID_JSON', 'body'],
    ['a body that is an array', '[]', 400, 'VALIDATION', 'body'],
    ['batch not an array', '{"batch":{}}', 400, 'VALIDATION', 'batch'],
    ['a message that is not an object', '{"batch":[42]}', 400, 'VALIDATION', 'batch[0]'],
    ['an envelope context that is not an object', '{"batch":[],"context":"x"}', 400, 'VALIDATION', 'context'],
  ])('%s → %s', async (_, text, status, code, field) => {
    const { status: got, body } = await answer(await plain().fetch(post(text)))
    expect(got).toBe(status)
    expect(body.error).toMatchObject({ code, field })
  })
})

describe('write keys', () => {
  it('takes the key from Basic auth', async () => {
    expect((await plain().fetch(post({ batch: [track()] }))).status).toBe(200)
  })

  it('takes the key from the body in the browser text/plain form', async () => {
    const request = post(JSON.stringify({ batch: [track()], writeKey: KEY }), {
      key: null,
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    })
    expect((await plain().fetch(request)).status).toBe(200)
  })

  it.each([
    ['an unknown Basic key', post({ batch: [track()] }, { key: 'nope' })],
    ['an unknown body key', post({ batch: [track()], writeKey: 'nope' }, { key: null })],
    ['no key at all', post({ batch: [track()] }, { key: null })],
    ['a Bearer token', post({ batch: [] }, { key: null, headers: { authorization: 'Bearer KEY' } })],
    ['invalid base64', post({ batch: [] }, { key: null, headers: { authorization: 'Basic %%%' } })],
    ['an empty user', post({ batch: [] }, { key: null, headers: { authorization: basic('') } })],
  ])('refuses %s with 401', async (_, request) => {
    const response = await plain().fetch(request)
    expect(response.status).toBe(401)
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic/)
    expect(((await response.json()) as any).error.code).toBe('UNAUTHORIZED')
  })

  it('refuses an unknown Basic key before reading the body', async () => {
    let pulled = false
    const body = new ReadableStream({ pull: () => void (pulled = true) }, { highWaterMark: 0 })
    const request = new Request('http://c.test/v1/batch', {
      method: 'POST', body, headers: { authorization: basic('nope') }, duplex: 'half',
    } as RequestInit)
    expect((await plain().fetch(request)).status).toBe(401)
    expect(pulled).toBe(false)
  })
})

describe('methods, paths, types, CORS', () => {
  it('answers 405 with Allow to a wrong method on a known path', async () => {
    const response = await plain().fetch(post(null, { method: 'GET' }))
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST, OPTIONS')
  })

  it('answers 404 to an unknown path', async () => {
    const response = await plain().fetch(post({ batch: [] }, { path: '/v2/batch' }))
    expect(response.status).toBe(404)
    expect(((await response.json()) as any).error.code).toBe('NOT_FOUND')
  })

  it('answers 415 to a content type it does not read', async () => {
    const request = post({ batch: [] }, { headers: { 'content-type': 'multipart/form-data; boundary=x' } })
    expect((await plain().fetch(request)).status).toBe(415)
  })

  it('answers a preflight with CORS headers, and echoes the origin on answers', async () => {
    const collector = plain()
    const preflight = await collector.fetch(
      new Request('http://c.test/v1/batch', {
        method: 'OPTIONS',
        headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      }),
    )
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    expect(preflight.headers.get('access-control-allow-methods')).toContain('POST')
    for (const name of ['Authorization', 'Content-Type', 'Content-Encoding']) {
      expect(preflight.headers.get('access-control-allow-headers')).toContain(name)
    }
    const ok = await collector.fetch(post({ batch: [] }, { headers: { origin: 'https://shop.example' } }))
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    const refused = await collector.fetch(post({ batch: [] }, { key: 'bad', headers: { origin: 'https://shop.example' } }))
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    expect((await collector.fetch(post({ batch: [] }))).headers.get('access-control-allow-origin')).toBe('*')
  })

  it('answers 503 once closed', async () => {
    const collector = plain()
    await collector.close()
    const response = await collector.fetch(post({ batch: [track()] }, { headers: { origin: 'https://shop.example' } }))
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('5')
    // A page's script (the browser client) may read it only when it is exposed.
    expect(response.headers.get('access-control-expose-headers')).toBe('Retry-After')
  })

  it('turns an unexpected error into a reported 500', async () => {
    const errors: unknown[] = []
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], onError: (e) => errors.push(e) })
    const request = post({ batch: [] })
    Object.defineProperty(request, 'url', { get: () => { throw new Error('boom') } })
    const response = await collector.fetch(request)
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ success: false, error: { code: 'INTERNAL', message: 'Internal server error.' } })
    expect(errors).toHaveLength(1)
  })
})

describe('hostile JSON', () => {
  it('keeps a "__proto__" member an ordinary property (no prototype change)', async () => {
    const { collector, calls } = forwardingCollector()
    const text = '{"batch":[{"type":"track","event":"E","userId":"u","messageId":"p","__proto__":{"polluted":true},"context":{"__proto__":{"x":1}}}],"context":{"a":1}}'
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect(Object.getPrototypeOf(calls[0].json.context)).toBe(Object.prototype)
    expect((calls[0].json.context as Record<string, unknown>).a).toBe(1)
  })
})
