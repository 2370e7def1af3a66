/**
 * Errors that say why: a request that got no answer names the system error in its message (with
 * the runtime's chain in `cause`), and a refusal carries the status, the server's reason and the
 * Retry-After used. Real sockets where Node makes the error; the exact shapes other runtimes use.
 */
import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { Client, HttpError, NetworkError, TlsError } from '../../src/index.js'
import { httpFailure, readCapped, readReason, systemErrorCode, transportFailure } from '../../src/transport/failure.js'

const URL_ = 'https://collector.test/v1/batch'

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

const failed = (cause: Record<string, unknown>) => new TypeError('fetch failed', { cause: Object.assign(new Error(String(cause.message)), cause) })

describe('a request that got no answer', () => {
  it('a refused connection says ECONNREFUSED in the message a user sees (real socket, Node\'s default transport: node:http)', async () => {
    const port = await closedPort()
    const endpoint = `http://127.0.0.1:${port}`
    const client = new Client('KEY', { endpoint, maxRetries: 0, debug: false })
    const errors: Error[] = []
    client.on('error', (error) => errors.push(error))
    client.track({ userId: 'u', event: 'E' })
    expect(await client.close()).toEqual({ delivered: 0, failed: 1 })
    expect(errors[0]).toBeInstanceOf(NetworkError)
    expect(errors[0].message).toBe(`Request to ${endpoint}/v1/batch failed: connect ECONNREFUSED 127.0.0.1:${port}`)
    // node:http's socket error itself (fetch would wrap it in a TypeError): the chain names the code either way.
    expect(systemErrorCode(errors[0].cause)).toBe('ECONNREFUSED')
  })

  it.each([
    ['Node, DNS', failed({ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND collector.invalid' }), 'ENOTFOUND', `Request to ${URL_} failed: getaddrinfo ENOTFOUND collector.invalid`],
    ['Node, connect timeout', failed({ code: 'UND_ERR_CONNECT_TIMEOUT', message: 'Connect Timeout Error' }), 'ETIMEDOUT', `Request to ${URL_} failed: ETIMEDOUT: Connect Timeout Error`],
    ['Node, several addresses', new TypeError('fetch failed', { cause: Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:80'), { code: 'ECONNREFUSED' })], ''), {}) }), 'ECONNREFUSED', `Request to ${URL_} failed: connect ECONNREFUSED ::1:80`],
    ['Bun', Object.assign(new Error('Unable to connect. Is the computer able to access the url?'), { code: 'ConnectionRefused' }), 'ECONNREFUSED', `Request to ${URL_} failed: ECONNREFUSED: Unable to connect. Is the computer able to access the url?`],
    ['Deno (words, no code)', new TypeError('error sending request for url (https://collector.test/v1/batch): client error (Connect): tcp connect error: Connection refused (os error 111)'), undefined, `Request to ${URL_} failed: error sending request for url (https://collector.test/v1/batch): client error (Connect): tcp connect error: Connection refused (os error 111)`],
    ['a browser (says nothing more)', new TypeError('Failed to fetch'), undefined, `Request to ${URL_} failed: Failed to fetch`],
  ])('%s', (_runtime, error, code, message) => {
    expect(systemErrorCode(error)).toBe(code)
    const reported = transportFailure(URL_, error)
    expect(reported).toBeInstanceOf(NetworkError)
    expect(reported.message).toBe(message)
    expect(reported.cause).toBe(error)
  })

  it('a refused certificate is a TlsError naming the code', () => {
    const error = failed({ code: 'DEPTH_ZERO_SELF_SIGNED_CERT', message: 'self-signed certificate' })
    const reported = transportFailure(URL_, error)
    expect(reported).toBeInstanceOf(TlsError)
    expect(reported.message).toBe(`TLS certificate refused for ${URL_} (DEPTH_ZERO_SELF_SIGNED_CERT).`)
  })
})

describe('a refusal', () => {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } })

  it("carries the status and the collector's reason", async () => {
    const error = await httpFailure(URL_, json(401, { success: false, error: { code: 'UNAUTHORIZED', message: 'Unknown write key.' } }), undefined)
    expect(error).toBeInstanceOf(HttpError)
    expect(error).toMatchObject({ status: 401, reason: 'Unknown write key.', message: `${URL_} answered 401: Unknown write key.` })
  })

  it('says which Retry-After it will honour', async () => {
    const error = await httpFailure(URL_, json(429, { message: 'Slow down' }), 2000)
    expect(error).toMatchObject({ status: 429, retryAfterMs: 2000, message: `${URL_} answered 429 (Retry-After: 2000 ms): Slow down` })
  })

  it('quotes no Retry-After on a final status, which is not retried (a 400 that sent one)', async () => {
    const error = await httpFailure(URL_, json(400, { message: 'Bad' }), 30_000)
    expect(error.message).toBe(`${URL_} answered 400: Bad`)
    expect(error.retryAfterMs).toBeUndefined()
    expect((await httpFailure(URL_, json(503, {}), 30_000)).message).toBe(`${URL_} answered 503 (Retry-After: 30000 ms).`)
  })

  it('reads the reason from `message`, `error.message` (the collector) or a string `error` (a webhook handler)', async () => {
    expect(await readReason(json(400, { message: 'a' }))).toBe('a')
    expect(await readReason(json(400, { error: { message: 'b' } }))).toBe('b')
    expect(await readReason(json(401, { error: 'X-Signature does not match the body.' }))).toBe('X-Signature does not match the body.')
    expect(await readReason(json(400, { error: 7 }))).toBeUndefined()
  })

  it('truncates a long reason to 200 characters, on one line', async () => {
    const reason = await readReason(json(400, { message: `line one\n${'x'.repeat(500)}` }))
    expect(reason).toHaveLength(200)
    expect(reason).toBe(`line one ${'x'.repeat(190)}…`)
  })

  it('without a reason, says the status alone', async () => {
    expect((await httpFailure(URL_, new Response('<html>', { status: 502, headers: { 'content-type': 'text/html' } }), undefined)).message).toBe(`${URL_} answered 502.`)
    expect((await httpFailure(URL_, new Response(null, { status: 302 }), undefined)).message).toBe(`${URL_} answered with a redirect (302); redirects are not followed.`)
  })

  it("reads a refusal's stream only as far as 16 KB, then cancels it (a huge body is never held whole)", async () => {
    let pulls = 0
    let cancelled = false
    const chunk = new Uint8Array(64 * 1024).fill(0x78)
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (++pulls === 1000) return controller.close()
        controller.enqueue(chunk)
      },
      cancel() {
        cancelled = true
      },
    }, { highWaterMark: 0 })
    const text = await readCapped(new Response(stream, { status: 503 }))
    expect(text).toHaveLength(16_384)
    expect(pulls).toBeLessThan(5)
    expect(cancelled).toBe(true)
  })
})
