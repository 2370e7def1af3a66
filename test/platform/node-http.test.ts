import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AbortedError, TimeoutError } from '../../src/errors.js'
import { MAX_ANSWER_BYTES, nodeRequest } from '../../src/platform/node-http.js'
import { attemptRequest } from '../../src/transport/attempt.js'
import { httpFailure } from '../../src/transport/failure.js'
import { WebhookDestination } from '../../src/webhooks/index.js'
import { Stop } from '../../src/transport/stop.js'

/**
 * A loopback server: `/hang` never answers; `/slow-<status>` sends the status and one byte of a
 * body that never ends; `/big-<status>` sends the status and a 20 MB body; anything else answers
 * 200 with what it received.
 */
let server: Server
let port: number
const seen: IncomingMessage[] = []
/** Resolves when the server has written the whole of the latest `/big-…` body. */
let bigWritten: Promise<void> = Promise.resolve()
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req)
    if (req.url === '/hang') return
    // Answers before reading the body (as a server refusing it by its length does).
    if (req.url === '/early-413') return void res.writeHead(413).end()
    const delay = /^\/delay-(\d+)$/.exec(req.url ?? '')
    if (delay) return void setTimeout(() => res.end('ok'), Number(delay[1]))
    const slow = /^\/slow-(\d+)$/.exec(req.url ?? '')
    if (slow) {
      res.writeHead(Number(slow[1]), { 'content-type': 'application/json', 'content-length': '100' })
      return void res.write('{')
    }
    const big = /^\/big-(\d+)$/.exec(req.url ?? '')
    if (big) {
      res.writeHead(Number(big[1]), { 'content-type': 'application/json' })
      bigWritten = new Promise((done) => res.once('finish', done))
      const chunk = Buffer.alloc(1 << 20, 'x')
      let left = 20
      const write = () => {
        while (left > 0) {
          left--
          const more = res.write(chunk)
          if (left === 0) return void res.end()
          if (!more) return void res.once('drain', write)
        }
      }
      return write()
    }
    req.resume()
    req.on('end', () => res.end(JSON.stringify({ url: req.url, host: req.headers.host, authorization: req.headers.authorization ?? null })))
  })
  await new Promise<void>((done) => server.listen(0, '::', done))
  port = (server.address() as AddressInfo).port
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((done) => server.close(done))
})

describe('nodeRequest', () => {
  it('takes the timeout itself: attemptRequest gets a TimeoutError, and the request is ended', async () => {
    expect((nodeRequest as { takesTimeout?: boolean }).takesTimeout).toBe(true)
    const url = `http://127.0.0.1:${port}/hang`
    const started = Date.now()
    const error = await attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 80 }).catch((e) => e)
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.message).toContain('80')
    expect(error.cause).toMatchObject({ timedOut: true })
    expect(Date.now() - started).toBeLessThan(5000)
    // The server sees the connection closed: the request was destroyed, not left running.
    const hung = seen.at(-1)!
    await new Promise((done) => (hung.socket.destroyed ? done(undefined) : hung.socket.once('close', done)))
  })

  it('counts the time limit from when the request has a socket, not while it waits for one of the 64', async () => {
    // 70 at once to one host: 6 wait for a socket while the first 64 take 200 ms each to answer.
    const url = `http://127.0.0.1:${port}/delay-200`
    const outcomes = await Promise.all(
      Array.from({ length: 70 }, () => attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 350 }).then((r) => r.status, (e: Error) => e.name)),
    )
    expect(outcomes.filter((o) => o !== 200)).toEqual([])
  })

  it('a stop signal ends it early with AbortedError; a stop before the request sends nothing', async () => {
    const stop = new Stop()
    const url = `http://127.0.0.1:${port}/hang`
    const pending = attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 60_000, signal: stop.signal }).catch((e) => e)
    await new Promise((r) => setTimeout(r, 20))
    stop.abort()
    expect(await pending).toBeInstanceOf(AbortedError)
    const before = seen.length
    expect(await attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 1000, signal: stop.signal }).catch((e) => e)).toBeInstanceOf(AbortedError)
    expect(seen.length).toBe(before)
  })

  it('sends to what the URL names: path and query, an IPv6 literal, credentials as Basic auth', async () => {
    const answer = async (url: string) => JSON.parse(await (await nodeRequest(url, { method: 'POST', body: '{}' })).text())
    expect(await answer(`http://127.0.0.1:${port}/v1/batch?x=1`)).toMatchObject({ url: '/v1/batch?x=1', authorization: null })
    expect(await answer(`http://[::1]:${port}/six`)).toMatchObject({ url: '/six', host: `[::1]:${port}` })
    const withUser = await answer(`http://us%40er:p%3Ass@127.0.0.1:${port}/auth`)
    expect(withUser.authorization).toBe(`Basic ${Buffer.from('us@er:p:ss').toString('base64')}`)
    // The same URL again comes from the parsed-URL cache: the same answer.
    expect(await answer(`http://127.0.0.1:${port}/v1/batch?x=1`)).toMatchObject({ url: '/v1/batch?x=1' })
  })

  it('sends each request the headers it is given, read at each request: one object to two targets, and one changed between two requests', async () => {
    const answer = async (url: string, headers: Record<string, string>) =>
      JSON.parse(await (await nodeRequest(url, { method: 'POST', headers, body: '{}' })).text())
    // Frozen (as a client's are): the same object to two targets, each with its own Host and credentials.
    const frozen = Object.freeze({ 'Content-Type': 'application/json' })
    expect(await answer(`http://a:b@127.0.0.1:${port}/one`, frozen)).toMatchObject({ host: `127.0.0.1:${port}`, authorization: `Basic ${btoa('a:b')}` })
    expect(await answer(`http://[::1]:${port}/two`, frozen)).toMatchObject({ host: `[::1]:${port}`, authorization: null })
    expect(await answer(`http://a:b@127.0.0.1:${port}/one`, frozen)).toMatchObject({ authorization: `Basic ${btoa('a:b')}` })
    // Not frozen: changed between two requests, the second sends what it holds then.
    const open: Record<string, string> = { Authorization: 'Bearer one' }
    expect(await answer(`http://127.0.0.1:${port}/three`, open)).toMatchObject({ authorization: 'Bearer one' })
    open.Authorization = 'Bearer two'
    expect(await answer(`http://127.0.0.1:${port}/three`, open)).toMatchObject({ authorization: 'Bearer two' })
  })
})

describe('nodeRequest: the status decides, bodies are capped', () => {
  it('a 2xx whose body is slow is a success, at once; the stalled body is cut off at the time limit', async () => {
    const url = `http://127.0.0.1:${port}/slow-200`
    const started = Date.now()
    const answer = await attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 300 })
    expect(answer.status).toBe(200)
    expect(Date.now() - started).toBeLessThan(300)
    // The connection does not stay busy with a body nobody waits for.
    const stalled = seen.at(-1)!
    await new Promise((done) => (stalled.socket.destroyed ? done(undefined) : stalled.socket.once('close', done)))
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })

  it('WebhookDestination on the default transport: a 200 with a slow body is delivered once', async () => {
    const url = `http://127.0.0.1:${port}/slow-200`
    const before = seen.length
    const destination = new WebhookDestination({ urls: [{ url }], timeout: 200, retryWindow: 1000, backoff: { baseMs: 1, capMs: 1 } })
    const result = await destination.deliver({ type: 'track', event: 'x' })
    expect(result).toMatchObject({ delivered: true, attempts: 1, results: [{ status: 200 }] })
    expect(seen.length - before).toBe(1)
    await destination.close()
  })

  it('a huge 2xx body is read and discarded: at most MAX_ANSWER_BYTES are kept', async () => {
    const url = `http://127.0.0.1:${port}/big-200`
    const answer = await nodeRequest(url, { method: 'POST', body: '{}', timeoutMs: 10_000 })
    expect(answer.status).toBe(200)
    expect((await answer.text()).length).toBe(MAX_ANSWER_BYTES)
    // The server could write all 20 MB: the client read them (and threw them away).
    await bigWritten
    const again = await nodeRequest(`http://127.0.0.1:${port}/after-big`, { method: 'POST', body: '{}', timeoutMs: 10_000 })
    expect(JSON.parse(await again.text())).toMatchObject({ url: '/after-big' })
  })

  it('a refusal keeps its status when its body stalls: no reason, no timeout, within the time limit', async () => {
    const url = `http://127.0.0.1:${port}/slow-503`
    const started = Date.now()
    const answer = await attemptRequest(nodeRequest, { url, headers: {}, body: '{}', timeoutMs: 200 })
    expect(answer.status).toBe(503)
    const error = await httpFailure(url, answer, undefined)
    expect(error.message).toBe(`${url} answered 503.`)
    expect(Date.now() - started).toBeLessThan(5000)
  })

  it("a huge refusal's body is capped too", async () => {
    const answer = await nodeRequest(`http://127.0.0.1:${port}/big-500`, { method: 'POST', body: '{}', timeoutMs: 10_000 })
    expect(answer.status).toBe(500)
    expect((await answer.text()).length).toBe(MAX_ANSWER_BYTES)
  })
})

describe('nodeRequest: a body answered before it was all written', () => {
  it('is said to be still being written (the answer\'s `written`) until it is, or the request is over', async () => {
    // 32 MB: more than the sockets buffer, so the answer comes while most of it is unsent.
    const body = new Uint8Array(32 << 20).fill(0x78)
    const answer = await nodeRequest(`http://127.0.0.1:${port}/early-413`, { method: 'POST', body, timeoutMs: 10_000 })
    expect(answer.status).toBe(413)
    const writing = answer.written
    expect(writing).toBeInstanceOf(Promise)
    await writing
    // A body read before the answer (the usual case) is written by then: nothing to wait for.
    const small = new Uint8Array(1024).fill(0x79)
    const read = await nodeRequest(`http://127.0.0.1:${port}/`, { method: 'POST', body: small, timeoutMs: 10_000 })
    expect(read.status).toBe(200)
    expect(read.written).toBeUndefined()
  })
})

describe('Stop', () => {
  it('calls each listener once on abort, in order, not removed ones, and keeps none after', () => {
    const stop = new Stop()
    const calls: string[] = []
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((name) => () => calls.push(name))
    for (const listener of [a, b, c, d]) stop.addEventListener('abort', listener)
    stop.removeEventListener('abort', b)
    stop.removeEventListener('abort', b) // (Twice: nothing more goes.)
    expect(stop.aborted).toBeFalsy()
    stop.abort()
    expect(stop.aborted).toBe(true)
    expect(stop.reason).toBeInstanceOf(Error)
    expect(calls).toEqual(['a', 'c', 'd'])
    // None kept: aborted again, it calls nothing.
    stop.abort()
    expect(calls).toEqual(['a', 'c', 'd'])
  })
})
