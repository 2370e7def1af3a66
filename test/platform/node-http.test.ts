import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AbortedError, TimeoutError } from '../../src/errors.js'
import { nodeRequest } from '../../src/platform/node-http.js'
import { attemptRequest } from '../../src/transport/attempt.js'
import { Stop } from '../../src/transport/stop.js'

/** A loopback server: `/hang` never answers; anything else answers 200 with what it received. */
let server: Server
let port: number
const seen: IncomingMessage[] = []
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req)
    if (req.url === '/hang') return
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
})

describe('Stop', () => {
  it('calls each listener once on abort, not removed ones, and keeps none after', () => {
    const stop = new Stop()
    const calls: string[] = []
    const a = () => calls.push('a')
    const b = () => calls.push('b')
    stop.addEventListener('abort', a)
    stop.addEventListener('abort', b)
    stop.removeEventListener('abort', b)
    expect(stop.aborted).toBeFalsy()
    stop.abort()
    expect(stop.aborted).toBe(true)
    expect(stop.reason).toBeInstanceOf(Error)
    expect(calls).toEqual(['a'])
    expect(stop.size).toBe(0)
  })
})
