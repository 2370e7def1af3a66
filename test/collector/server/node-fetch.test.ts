import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { nodeFetch } from '../../../src/collector/index.js'
import { nodeRequest } from '../../../src/platform/node-http.js'
import { transportOf } from '../../../src/platform/transport.js'
import { WebhookDestination, toWebhookPayload } from '../../../src/webhooks/index.js'
import { selfSignedCertificate, startHttpsServer, startServer, type TestServer } from '../../webhooks/servers.js'

const payload = toWebhookPayload({ type: 'track', event: 'Signed Up', userId: 'u-1' })

describe('nodeFetch', () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ status: 200 })
  })
  afterAll(async () => {
    await server.close()
  })

  it('POSTs the body and headers, and returns status, headers and body', async () => {
    server.replies.push({ status: 201, headers: { 'x-answer': '42' }, body: 'created' })
    const response = await nodeFetch(new URL("/in?q=1", server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-signature': 'abc' },
      body: '{"é":1}',
    })
    expect(response.status).toBe(201)
    expect(response.headers.get('x-answer')).toBe('42')
    expect(await response.text()).toBe('created')
    const request = server.requests.at(-1)!
    expect(request).toMatchObject({ method: 'POST', path: '/in?q=1' })
    expect(request.headers['x-signature']).toBe('abc')
    expect(request.headers['content-length']).toBe(String(Buffer.byteLength('{"é":1}')))
    expect(request.raw.toString('utf8')).toBe('{"é":1}')
  })

  it('a WebhookDestination given nodeFetch sends through nodeRequest (no Response built): the same status, Retry-After and reason', async () => {
    expect(transportOf(nodeFetch)).toBe(nodeRequest)
    const destination = new WebhookDestination({ urls: [{ url: server.url }], fetch: nodeFetch })
    server.replies.push({ status: 429, headers: { 'retry-after': '7', 'content-type': 'application/json' }, body: '{"message":"Slow down."}' })
    const limited = await destination.attempt(JSON.stringify(payload))
    expect(limited).toMatchObject({ deliveredBy: -1, retry: [0], retryAfterMs: 7000 })
    expect(limited.error?.message).toMatch(/answered 429 \(Retry-After: 7000 ms\): Slow down\./)
    server.replies.push({ status: 204 })
    expect(await destination.attempt(JSON.stringify(payload), { attempt: 2 })).toMatchObject({ deliveredBy: 0 })
  })

  it('does not follow redirects', async () => {
    server.replies.push({ status: 302, headers: { location: '/elsewhere' } })
    const before = server.requests.length
    const response = await nodeFetch(server.url, { method: 'POST', body: '{}' })
    expect(response.status).toBe(302)
    expect(server.requests.length).toBe(before + 1)
  })

  it('reuses keep-alive connections', async () => {
    let connections = 0
    const counter = () => connections++
    server.server.on('connection', counter)
    try {
      for (let i = 0; i < 5; i++) await (await nodeFetch(server.url, { method: 'POST', body: '{}' })).text()
      expect(connections).toBeLessThanOrEqual(1)
    } finally {
      server.server.off('connection', counter)
    }
  })

  it('rejects when its signal aborts, and the destination reports a timeout', async () => {
    server.replies.push({ status: 200, hang: true })
    const destination = new WebhookDestination({ urls: [{ url: server.url }], fetch: nodeFetch, timeout: 50, retryWindow: 0 })
    const result = await destination.deliver(payload)
    expect(result.delivered).toBe(false)
    expect(result.error?.code).toBe('TIMEOUT')
  })

  it('rejects when the abort lands while the body is still arriving; a destination counts that 2xx as delivered', async () => {
    const slow = createServer((_, res) => {
      res.writeHead(200, { 'content-length': '100' })
      res.write('partial')
    })
    await new Promise<void>((done) => slow.listen(0, '127.0.0.1', done))
    try {
      const url = `http://127.0.0.1:${(slow.address() as { port: number }).port}/`
      // A fetch's caller reads the body: cut short, the call rejects (as fetch's body read would).
      await expect(nodeFetch(url, { method: 'POST', body: '{}', signal: AbortSignal.timeout(100) })).rejects.toThrow()
      // The destination needs the status only: the receiver answered 200, so it got the message.
      const destination = new WebhookDestination({ urls: [{ url }], fetch: nodeFetch, timeout: 100, retryWindow: 0 })
      const result = await destination.deliver(payload)
      expect(result).toMatchObject({ delivered: true, attempts: 1, results: [{ status: 200 }] })
    } finally {
      slow.closeAllConnections()
      slow.close()
    }
  })

  it('rejects on a refused connection (a network error for the destination)', async () => {
    const closed = await startServer()
    await closed.close()
    await expect(nodeFetch(closed.url, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    const destination = new WebhookDestination({ urls: [{ url: closed.url }], fetch: nodeFetch, retryWindow: 0 })
    expect((await destination.deliver(payload)).error?.code).toBe('NETWORK')
  })

  it('refuses a non-http URL', async () => {
    await expect(nodeFetch('ftp://127.0.0.1/', {})).rejects.toThrow(/unsupported protocol/)
  })
})

describe('nodeFetch over TLS', () => {
  let https: TestServer
  beforeAll(async () => {
    https = await startHttpsServer(selfSignedCertificate())
  })
  afterAll(async () => {
    await https.close()
  })

  it('refuses a self-signed certificate: a TLS error, not retried, no request sent', async () => {
    const destination = new WebhookDestination({ urls: [{ url: https.url }], fetch: nodeFetch })
    const result = await destination.deliver(payload)
    expect(result).toMatchObject({ delivered: false, attempts: 1 })
    expect(result.error?.code).toBe('TLS')
    expect(https.requests).toHaveLength(0)
  })
})
