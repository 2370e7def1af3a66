import { createServer, type ServerResponse } from 'node:http'
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCollector, createRequestListener, startServer, type CollectorServer } from '../../../src/collector/index.js'
import { KEY, basic, track, until } from '../helpers.js'

/** Sends raw bytes on a fresh connection; resolves with the status of the answer (0: none). */
/** The head of the answer to `text` sent on a raw socket (`''` if the connection closes first). */
function rawHead(port: number, text: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      const end = received.indexOf('\r\n\r\n')
      if (end >= 0) {
        resolve(received.slice(0, end + 2))
        socket.destroy()
      }
    })
    socket.on('error', () => resolve(''))
    socket.on('close', () => resolve(''))
    socket.write(text)
  })
}

function raw(port: number, text: string | Buffer): Promise<number> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    let received = ''
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1')
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(received)
      if (match) {
        resolve(Number(match[1]))
        socket.destroy()
      }
    })
    socket.on('error', () => resolve(0))
    socket.on('close', () => resolve(0))
    socket.write(text)
  })
}

const json = (body: unknown) => JSON.stringify(body)
const good = json({ batch: [track()] })

describe('the Node server, over real sockets', () => {
  let server: CollectorServer
  let port: number
  const errors: unknown[] = []

  beforeAll(async () => {
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], onError: (e) => errors.push(e) })
    server = await startServer(collector, { port: 0 })
    port = server.port
  })
  afterAll(async () => {
    await server.close()
  })

  const send = (path: string, init: RequestInit & { key?: string | null } = {}) => {
    const { key = KEY, headers, ...rest } = init
    return fetch(`${server.url}${path}`, {
      method: 'POST',
      ...rest,
      headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: basic(key) }), ...(headers as Record<string, string>) },
    })
  }

  it('listens on loopback and reports its URL', () => {
    expect(server.url).toBe(`http://127.0.0.1:${port}`)
    expect(server.host).toBe('127.0.0.1')
  })

  it('takes a request line with a doubled slash (`POST //v1/batch`, an endpoint configured with a trailing one) as /v1/batch', async () => {
    const head = `POST //v1/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${basic(KEY)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(good)}\r\nConnection: close\r\n\r\n`
    expect(await raw(port, head + good)).toBe(200)
  })

  it('accepts a valid batch', async () => {
    const response = await send('/v1/batch', { body: good })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true })
  })

  it('streams a large valid body through (just under 512,000 bytes, as analytics-ruby batches up to)', async () => {
    const body = json({ batch: Array.from({ length: 16 }, (_, i) => track({ messageId: `m${i}`, properties: { pad: 'x'.repeat(31_800) } })) })
    expect(body.length).toBeGreaterThan(505_000)
    expect(body.length).toBeLessThan(512_000)
    expect((await send('/v1/batch', { body })).status).toBe(200)
  })

  it('accepts a gzip body, and a chunked one (no Content-Length: streamed, not read whole first)', async () => {
    const gzipped = await send('/v1/batch', { body: gzipSync(Buffer.from(good)), headers: { 'content-encoding': 'gzip' } })
    expect(gzipped.status).toBe(200)
    const head = `POST /v1/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(KEY)}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`
    const bytes = Buffer.byteLength(good)
    expect(await raw(port, `${head}${bytes.toString(16)}\r\n${good}\r\n0\r\n\r\n`)).toBe(200)
  })

  it('keeps serving after a client goes away in the middle of a body it declared', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`POST /v1/batch HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(KEY)}\r\nContent-Length: 1000\r\n\r\n{"batch":[`)
        setTimeout(() => {
          socket.destroy()
          resolve()
        }, 20)
      })
    })
    expect((await send('/v1/batch', { body: good })).status).toBe(200)
    expect(errors).toEqual([])
  })

  const bomb = Buffer.concat(Array.from({ length: 50 }, () => gzipSync(Buffer.alloc(10 * 1024 * 1024))))
  /** A gzip member of `content` carrying `extra` in its header (FEXTRA): bytes that inflate to nothing. */
  const padded = (content: Buffer, extra: number) => {
    const gz = gzipSync(content)
    const header = Buffer.from(gz.subarray(0, 10))
    header[3] |= 4
    const xlen = Buffer.alloc(2)
    xlen.writeUInt16LE(extra)
    return Buffer.concat([header, xlen, Buffer.alloc(extra, 0x61), gz.subarray(10)])
  }
  // 540,000 bytes on the wire that inflate to one small batch.
  const paddedGzip = Buffer.concat([...Array.from({ length: 9 }, () => padded(Buffer.alloc(0), 60_000)), padded(Buffer.alloc(0), 20_000), gzipSync(Buffer.from(good))])

  const malformed: Array<[string, () => Promise<number>, number]> = [
    ['GET on /v1/batch', async () => (await send('/v1/batch', { method: 'GET' })).status, 405],
    ['PUT on /v1/batch', async () => (await send('/v1/batch', { method: 'PUT', body: good })).status, 405],
    ['DELETE on /v1/track', async () => (await send('/v1/track', { method: 'DELETE' })).status, 405],
    ['TRACE (raw)', () => raw(port, 'TRACE /v1/batch HTTP/1.1\r\nHost: x\r\n\r\n'), 405],
    ['an unknown path', async () => (await send('/v2/batch', { body: good })).status, 404],
    ['the root path', async () => (await send('/', { body: good })).status, 404],
    ['admin path without admin token', async () => (await send('/v1/deletions', { body: '{}' })).status, 404],
    ['a wrong content type', async () => (await send('/v1/batch', { body: good, headers: { 'content-type': 'application/xml' } })).status, 415],
    ['an unknown content encoding', async () => (await send('/v1/batch', { body: good, headers: { 'content-encoding': 'br' } })).status, 415],
    ['truncated JSON', async () => (await send('/v1/batch', { body: good.slice(0, -5) })).status, 400],
    ['an empty body', async () => (await send('/v1/batch', { body: '' })).status, 400],
    ['a body that is not an object', async () => (await send('/v1/batch', { body: '"batch"' })).status, 400],
    ['batch not an array', async () => (await send('/v1/batch', { body: json({ batch: { 0: track() } }) })).status, 400],
    ['a message that is not an object', async () => (await send('/v1/batch', { body: json({ batch: ['track'] }) })).status, 400],
    ['a track without event', async () => (await send('/v1/batch', { body: json({ batch: [track({ event: undefined })] }) })).status, 400],
    ['an unknown message type', async () => (await send('/v1/batch', { body: json({ batch: [{ type: 'purchase', userId: 'u' }] }) })).status, 400],
    ['a message over 32,768 bytes', async () => (await send('/v1/batch', { body: json({ batch: [track({ properties: { p: 'x'.repeat(33_000) } })] }) })).status, 400],
    ['invalid UTF-8', async () => (await send('/v1/batch', { body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]) })).status, 400],
    ['corrupt gzip', async () => (await send('/v1/batch', { body: Buffer.from('not gzip'), headers: { 'content-encoding': 'gzip' } })).status, 400],
    ['missing auth', async () => (await send('/v1/batch', { body: good, key: null })).status, 401],
    ['bad base64 auth', async () => (await send('/v1/batch', { body: good, key: null, headers: { authorization: 'Basic ***' } })).status, 401],
    ['an unknown write key', async () => (await send('/v1/batch', { body: good, key: 'nope' })).status, 401],
    ['a body just over 512,000 bytes', async () => (await send('/v1/batch', { body: json({ batch: [], pad: 'x'.repeat(512_000) }) })).status, 413],
    ['a gzip bomb', async () => (await send('/v1/batch', { body: bomb, headers: { 'content-encoding': 'gzip' } })).status, 413],
    ['a gzip body over 512,000 bytes that inflates to a small batch', async () => (await send('/v1/batch', { body: paddedGzip, headers: { 'content-encoding': 'gzip' } })).status, 413],
    ['huge headers (32 KB)', async () => (await send('/v1/batch', { body: good, headers: { 'x-pad': 'y'.repeat(32_000) } })).status, 431],
    ['a malformed request line (raw)', () => raw(port, 'THIS IS NOT HTTP\r\n\r\n'), 400],
    ['an invalid header line (raw)', () => raw(port, 'POST /v1/batch HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'), 400],
    ['a bad Content-Length (raw)', () => raw(port, 'POST /v1/batch HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'), 400],
  ]

  it.each(malformed)('answers %s with %i, and keeps serving', async (_, request, status) => {
    expect(await request()).toBe(status)
    expect((await send('/v1/batch', { body: good })).status).toBe(200)
  })

  it('answers even the requests Node refuses before the handler with Access-Control-Allow-Origin, so a page reads the status', async () => {
    const huge = await send('/v1/batch', { body: good, headers: { 'x-pad': 'y'.repeat(32_000), origin: 'https://shop.example' } })
    expect(huge.status).toBe(431)
    expect(huge.headers.get('access-control-allow-origin')).toBe('*')
    for (const request of ['TRACE /v1/batch HTTP/1.1\r\nHost: x\r\nOrigin: https://shop.example\r\n\r\n', 'THIS IS NOT HTTP\r\n\r\n']) {
      expect(await rawHead(port, request)).toMatch(/\r\naccess-control-allow-origin: \*\r\n/i)
    }
  })

  it(`has a table of at least 20 malformed requests (${malformed.length})`, () => {
    expect(malformed.length).toBeGreaterThanOrEqual(20)
    expect(errors).toEqual([])
  })

  it('answers malformed requests in parallel and still serves', async () => {
    const statuses = await Promise.all(malformed.map(([, request]) => request()))
    expect(statuses).toEqual(malformed.map(([, , status]) => status))
    expect((await send('/v1/batch', { body: good })).status).toBe(200)
  })
})

describe('server failure handling', () => {
  it('answers 500 to a handler that throws, reports it, and keeps serving', async () => {
    const errors: unknown[] = []
    let calls = 0
    const server = await startServer(
      async () => {
        if (++calls === 1) throw new Error('handler bug')
        return new Response('fine')
      },
      { port: 0, onError: (error) => errors.push(error) },
    )
    try {
      const first = await fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}' })
      expect(first.status).toBe(500)
      expect(((await first.json()) as any).error.code).toBe('INTERNAL')
      expect((errors[0] as Error).message).toBe('handler bug')
      expect(await (await fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}' })).text()).toBe('fine')
    } finally {
      await server.close()
    }
  })

  it("gives a handler of its own the request body as a stream (the collector's held bodies are for its own handler)", async () => {
    const server = await startServer(async (request) => new Response(`${request.body === null ? 'no body' : 'stream'}: ${await request.text()}`), { port: 0 })
    try {
      const answer = await fetch(`${server.url}/echo`, { method: 'POST', body: 'hello', headers: { 'content-length': '5' } })
      expect(await answer.text()).toBe('stream: hello')
    } finally {
      await server.close()
    }
  })

  it('close() waits for a request in flight, then stops accepting', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let arrived = false
    const server = await startServer(async () => ((arrived = true), await gate, new Response('done')), { port: 0 })
    const inFlight = fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}' })
    await until(() => arrived, 'the request to reach the handler')
    const closed = server.close()
    release()
    expect(await (await inFlight).text()).toBe('done')
    await closed
    await expect(fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}' })).rejects.toThrow()
  })

  it('writes an event stream as it comes, cancels it when the client goes, and close() ends it', async () => {
    const cancelled: string[] = []
    let push!: (text: string) => void
    const server = await startServer(async (request) => {
      const who = new URL(request.url).searchParams.get('who')!
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          push = (text) => controller.enqueue(new TextEncoder().encode(text))
          push(`data: hello ${who}\n\n`)
        },
        cancel: () => void cancelled.push(who),
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }, { port: 0 })
    const gone = new AbortController()
    const first = await fetch(`${server.url}/?who=first`, { signal: gone.signal })
    const firstReader = first.body!.pipeThrough(new TextDecoderStream()).getReader()
    expect((await firstReader.read()).value).toBe('data: hello first\n\n')
    gone.abort()
    await expect.poll(() => cancelled).toEqual(['first'])

    const second = await fetch(`${server.url}/?who=second`)
    expect(second.headers.get('content-length')).toBeNull()
    const reader = second.body!.pipeThrough(new TextDecoderStream()).getReader()
    expect((await reader.read()).value).toBe('data: hello second\n\n')
    push('data: more\n\n')
    expect((await reader.read()).value).toBe('data: more\n\n')
    // A minute's grace: only ending the stream lets close() resolve within the test's time.
    await server.close(60_000)
    expect(await reader.read()).toEqual({ done: true, value: undefined })
    expect(cancelled).toEqual(['first', 'second'])
  })

  it('reads an event stream on only once a client that fell behind has drained', async () => {
    let pulls = 0
    const body = () =>
      new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new TextEncoder().encode(`data: ${++pulls}\n\n`)) }, { highWaterMark: 0 })
    const listener = createRequestListener(async () => new Response(body(), { headers: { 'content-type': 'text/event-stream' } }))
    let res!: ServerResponse
    const server = createServer((req, response) => {
      res = response
      // Every write reports a full buffer, as for a client that does not read.
      const write = response.write.bind(response)
      response.write = ((chunk: Uint8Array) => (write(chunk), false)) as typeof response.write
      listener(req, response)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as { port: number }
      const reader = (await fetch(`http://127.0.0.1:${port}/`)).body!.pipeThrough(new TextDecoderStream()).getReader()
      expect((await reader.read()).value).toBe('data: 1\n\n')
      for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve))
      expect(pulls).toBe(1)
      res.emit('drain')
      expect((await reader.read()).value).toBe('data: 2\n\n')
      for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve))
      expect(pulls).toBe(2)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('refuses to start on a port in use', async () => {
    const first = await startServer(async () => new Response(''), { port: 0 })
    try {
      await expect(startServer(async () => new Response(''), { port: first.port })).rejects.toThrow(/EADDRINUSE/)
    } finally {
      await first.close()
    }
  })
})
