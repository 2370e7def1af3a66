import { createHmac } from 'node:crypto'
import { describe, expect, it, vi } from 'vitest'
import { createWebhookHandler, isConfigError, toWebhookPayload, type WebhookPayload } from '../../src/webhooks/index.js'

const SECRET = 'receiver-secret'
const sig = (body: string | Buffer, secret = SECRET) => createHmac('sha1', secret).update(body).digest('hex')
const body = JSON.stringify(toWebhookPayload({ type: 'group', groupId: 'g', userId: 'u', traits: { 'Company Name': 'Ünïcode Ltd 😀' } }))

function post(raw: string | Uint8Array, headers: Record<string, string> = {}, method = 'POST'): Request {
  return new Request('https://receiver.test/hooks', { method, body: method === 'GET' ? undefined : (raw as BodyInit), headers })
}

describe('createWebhookHandler', () => {
  it('answers 200 after onEvent resolves, with the parsed payload and the request', async () => {
    const order: string[] = []
    const onEvent = vi.fn(async (payload: WebhookPayload, request: Request) => {
      await new Promise((resolve) => setTimeout(resolve, 5))
      order.push(`onEvent ${payload.type} ${request.url}`)
    })
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const response = await handler(post(body, { 'X-Signature': sig(body), 'Content-Type': 'application/json' }))
    order.push('answered')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ ok: true })
    expect(onEvent).toHaveBeenCalledTimes(1)
    expect(onEvent.mock.calls[0][0]).toEqual(JSON.parse(body))
    expect(order).toEqual(['onEvent group https://receiver.test/hooks', 'answered'])
  })

  it('verifies the raw bytes: a byte-identical body passes, the same JSON re-serialised does not', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const spaced = '{ "type": "track", "event": "caf\\u00e9", "properties": {"price": 1.50} }'
    expect((await handler(post(new TextEncoder().encode(spaced), { 'x-signature': sig(spaced) }))).status).toBe(200)
    const reserialised = JSON.stringify(JSON.parse(spaced))
    expect((await handler(post(reserialised, { 'x-signature': sig(spaced) }))).status).toBe(401)
    expect(onEvent).toHaveBeenCalledTimes(1)
  })

  it('answers 401 for a missing, malformed or wrong signature, without calling onEvent', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const headerSets: Array<Record<string, string>> = [
      {},
      { 'X-Signature': '' },
      { 'X-Signature': 'nothex' },
      { 'X-Signature': sig(body, 'wrong') },
      { 'X-Signature': sig(body + ' ') },
    ]
    for (const headers of headerSets) {
      const response = await handler(post(body, headers))
      expect(response.status, JSON.stringify(headers)).toBe(401)
      expect((await response.json()).error).toMatch(/X-Signature/)
    }
    expect(onEvent).not.toHaveBeenCalled()
  })

  it('checks the signature before parsing: unsigned garbage is 401, signed garbage is 400', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const garbage = '{"type": "track",'
    expect((await handler(post(garbage))).status).toBe(401)
    const cases = [garbage, 'null', '[1,2]', '"track"', '{"type":"unknown"}', '{"event":"no type"}']
    for (const raw of cases) {
      const response = await handler(post(raw, { 'X-Signature': sig(raw) }))
      expect(response.status, raw).toBe(400)
      expect(response.headers.get('content-type')).toBe('application/json')
    }
    const invalidUtf8 = Uint8Array.of(0x7b, 0xff, 0x7d)
    expect((await handler(post(invalidUtf8, { 'X-Signature': sig(Buffer.from(invalidUtf8)) }))).status).toBe(400)
    expect(onEvent).not.toHaveBeenCalled()
  })

  it('answers 405 with Allow: POST for other methods', async () => {
    const handler = createWebhookHandler({ secret: SECRET, onEvent: () => {} })
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const response = await handler(post(body, {}, method))
      expect(response.status).toBe(405)
      expect(response.headers.get('allow')).toBe('POST')
    }
  })

  it('answers 413 for a body over maxBodyBytes, declared or streamed', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent, maxBodyBytes: 100 })
    const big = JSON.stringify({ type: 'track', event: 'x'.repeat(200) })
    expect((await handler(post(big, { 'X-Signature': sig(big) }))).status).toBe(413)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big.slice(0, 80)))
        controller.enqueue(new TextEncoder().encode(big.slice(80)))
        controller.close()
      },
    })
    const streamed = new Request('https://receiver.test/', { method: 'POST', body: stream, headers: { 'X-Signature': sig(big) }, duplex: 'half' } as RequestInit)
    expect((await handler(streamed)).status).toBe(413)
    expect(onEvent).not.toHaveBeenCalled()
  })

  it('answers 500 when onEvent throws, so the sender retries, and reports the error', async () => {
    const onError = vi.fn()
    const failure = new Error('db down')
    const handler = createWebhookHandler({ secret: SECRET, onEvent: async () => { throw failure }, onError })
    const response = await handler(post(body, { 'X-Signature': sig(body) }))
    expect(response.status).toBe(500)
    expect(await response.text()).not.toContain('db down')
    expect(onError).toHaveBeenCalledWith(failure, JSON.parse(body))
  })

  it('an onError that throws still answers 500, and both failures reach console.error', async () => {
    const failure = new Error('db down')
    const reportFailure = new Error('logger down')
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const handler = createWebhookHandler({ secret: SECRET, onEvent: async () => { throw failure }, onError: () => { throw reportFailure } })
      expect((await handler(post(body, { 'X-Signature': sig(body) }))).status).toBe(500)
      expect(consoleError).toHaveBeenCalledWith('isomorphic-analytics: createWebhookHandler: onError threw', reportFailure, 'while reporting', failure)
    } finally {
      consoleError.mockRestore()
    }
  })

  it("answers 500 (the receiver's fault: the sender retries) when the body was already read, saying so and how to fix it", async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const request = post(body, { 'X-Signature': sig(body) })
    await request.text() // what a body parser or middleware does first
    const response = await handler(request)
    expect(response.status).toBe(500)
    const { error } = (await response.json()) as { error: string }
    expect(error).toMatch(/already read before the webhook handler got it/)
    expect(error).toMatch(/Pass the handler the untouched Request, or a new Request built from the raw body bytes/)
    expect(onEvent).not.toHaveBeenCalled()
    // A stream being read by someone else is the same mistake.
    const locked = post(body, { 'X-Signature': sig(body) })
    locked.body!.getReader()
    expect((await handler(locked)).status).toBe(500)
  })

  it('gives onEvent integers beyond 2^53 exactly, as bigints; other numbers as JSON.parse reads them', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ secret: SECRET, onEvent })
    const raw = '{"version":1,"type":"track","event":"Order","userId":"u","properties":{"orderId":9223372036854775807,"neg":-12345678901234567890,"items":[1152921504606846977,2],"price":1.50,"safe":9007199254740991,"s":"12345678901234567890"},"timestamp":"2026-11-22T10:00:00.000Z","context":{}}'
    expect((await handler(post(raw, { 'X-Signature': sig(raw) }))).status).toBe(200)
    const { properties } = onEvent.mock.calls[0][0] as { properties: Record<string, unknown> }
    expect(properties).toEqual({
      orderId: 9223372036854775807n,
      neg: -12345678901234567890n,
      items: [1152921504606846977n, 2],
      price: 1.5,
      safe: 9007199254740991,
      s: '12345678901234567890',
    })
  })

  it('validates its options with ConfigErrors', () => {
    const cases: Array<[unknown, string]> = [
      [{ onEvent: () => {} }, 'secret'],
      [{ secret: '', onEvent: () => {} }, 'secret'],
      [{ secret: 's' }, 'onEvent'],
      [{ secret: 's', onEvent: () => {}, maxBodyBytes: 0 }, 'maxBodyBytes'],
      [{ secret: 's', onEvent: () => {}, onError: 'log' }, 'onError'],
      [undefined, 'options'],
      // A typo would keep the default silently: refused, with a guess.
      [{ secret: 's', onEvent: () => {}, onerror: () => {} }, 'onerror'],
      [{ secret: 's', onEvent: () => {}, maxBodySize: 10 }, 'maxBodySize'],
      [{ secret: 's', onevent: () => {} }, 'onevent'],
    ]
    for (const [options, option] of cases) {
      let error: unknown
      try {
        createWebhookHandler(options as never)
      } catch (e) {
        error = e
      }
      expect(isConfigError(error), option).toBe(true)
      expect((error as { option: string }).option).toBe(option)
    }
    expect(() => createWebhookHandler({ secret: 's', onEvent: () => {}, maxBodySize: 10 } as never)).toThrow('Unknown option `maxBodySize` (did you mean `maxBodyBytes`?); known: secret, standardSecrets, toleranceSeconds, onEvent, maxBodyBytes, onError.')
  })
})
