import { gzipSync, deflateSync } from 'node:zlib'
import { describe, expect, it, vi } from 'vitest'
import { MAX_BATCH_BYTES } from '../../../src/limits.js'
import { createCollector } from '../../../src/collector/index.js'
import { holdRequestBody } from '../../../src/collector/http/direct.js'
import { readBodyText } from '../../../src/collector/http/read-body.js'
import { HttpProblem } from '../../../src/collector/http/errors.js'
import { KEY, basic, track } from '../helpers.js'

/** A body stream that hands out `chunks` one per pull and counts the bytes pulled. */
function countedStream(chunks: Uint8Array[]) {
  const state = { pulled: 0, cancelled: false }
  let i = 0
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (i === chunks.length) return controller.close()
        state.pulled += chunks[i].byteLength
        controller.enqueue(chunks[i++])
      },
      cancel() {
        state.cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, state }
}

function request(body: BodyInit | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) {
  return new Request('http://c.test/v1/batch', {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json', authorization: basic(KEY), ...headers },
    duplex: 'half',
  } as RequestInit)
}

async function problemOf(promise: Promise<unknown>): Promise<HttpProblem> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(HttpProblem)
    return error as HttpProblem
  }
  throw new Error('expected a refusal')
}

const collector = () => createCollector({ sources: [{ writeKey: KEY, name: 'web' }] })
const chunk = (n: number, byte = 0x20) => new Uint8Array(n).fill(byte)

describe("body size limit: 512,000 bytes (the service's 500 KiB)", () => {
  it('reads a body of exactly 512,000 bytes', async () => {
    const text = await readBodyText(request(chunk(512_000)))
    expect(text.length).toBe(512_000)
  })

  it('refuses a declared Content-Length over the limit without reading', async () => {
    const { stream, state } = countedStream([chunk(1000)])
    const problem = await problemOf(readBodyText(request(stream, { 'content-length': '512001' })))
    expect(problem.status).toBe(413)
    expect(state.pulled).toBe(0)
  })

  it('refuses a streamed body one byte over, without pulling more than the limit and a chunk', async () => {
    const chunks = Array.from({ length: 100 }, () => chunk(10_000)) // 1,000,000 bytes offered
    const { stream, state } = countedStream(chunks)
    const problem = await problemOf(readBodyText(request(stream)))
    expect(problem.status).toBe(413)
    expect(problem.code).toBe('PAYLOAD_TOO_LARGE')
    expect(state.pulled).toBeLessThanOrEqual(522_000)
    expect(state.cancelled).toBe(true)
  })

  it('answers 413 through the handler for 512,001 bytes', async () => {
    const body = JSON.stringify({ batch: [track()], pad: 'x'.repeat(512_001) })
    const response = await collector().fetch(request(body))
    expect(response.status).toBe(413)
    expect(((await response.json()) as any).error.code).toBe('PAYLOAD_TOO_LARGE')
  })
})

describe('gzip and deflate', () => {
  it('accepts a gzip body', async () => {
    const body = gzipSync(JSON.stringify({ batch: [track()] }))
    expect((await collector().fetch(request(body, { 'content-encoding': 'gzip' }))).status).toBe(200)
  })

  it('accepts a deflate body', async () => {
    const body = deflateSync(JSON.stringify({ batch: [track()] }))
    expect((await collector().fetch(request(body, { 'content-encoding': 'deflate' }))).status).toBe(200)
  })

  it('applies the limit to the decompressed size (small gzip, large content)', async () => {
    const body = gzipSync(JSON.stringify({ batch: [track()], pad: ' '.repeat(600_000) }))
    expect(body.byteLength).toBeLessThan(10_000)
    expect((await collector().fetch(request(body, { 'content-encoding': 'gzip' }))).status).toBe(413)
  })

  it('refuses a gzip bomb after inflating no more than the limit', async () => {
    // 50 gzip members of 10 MiB of zeros: ~500 KB on the wire, 500 MiB inflated.
    const member = gzipSync(Buffer.alloc(10 * 1024 * 1024))
    const bomb = Buffer.concat(Array.from({ length: 50 }, () => member))
    expect(bomb.byteLength).toBeLessThan(MAX_BATCH_BYTES + 64 * 1024)
    // Count what comes out of the real decompressor, whoever reads it.
    const Real = globalThis.DecompressionStream
    let inflated = 0
    class CountingDecompression {
      readonly writable: WritableStream<BufferSource>
      readonly readable: ReadableStream<Uint8Array>
      constructor(format: CompressionFormat) {
        const real = new Real(format)
        this.writable = real.writable
        this.readable = real.readable.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              inflated += chunk.byteLength
              controller.enqueue(chunk)
            },
          }),
        )
      }
    }
    vi.stubGlobal('DecompressionStream', CountingDecompression)
    try {
      const chunks = Array.from({ length: Math.ceil(bomb.byteLength / 16_384) }, (_, i) => new Uint8Array(bomb.subarray(i * 16_384, (i + 1) * 16_384)))
      const { stream } = countedStream(chunks)
      const problem = await problemOf(readBodyText(request(stream, { 'content-encoding': 'gzip' })))
      expect(problem.status).toBe(413)
      expect(problem.message).toContain('Decompressed')
      await new Promise((resolve) => setTimeout(resolve, 50))
      expect(inflated).toBeGreaterThan(MAX_BATCH_BYTES)
      expect(inflated).toBeLessThan(MAX_BATCH_BYTES + 256 * 1024)
    } finally {
      vi.unstubAllGlobals()
    }
  })

  it('bounds the compressed input too: endless empty gzip members are refused', async () => {
    // Each empty member is ~20 bytes that inflate to nothing: without a bound on the compressed
    // side, such a body could stream for ever.
    const empty = gzipSync(Buffer.alloc(0))
    const body = Buffer.concat(Array.from({ length: Math.ceil(700_000 / empty.byteLength) }, () => empty))
    const chunks = Array.from({ length: Math.ceil(body.byteLength / 16_384) }, (_, i) => new Uint8Array(body.subarray(i * 16_384, (i + 1) * 16_384)))
    const { stream, state } = countedStream(chunks)
    const problem = await problemOf(readBodyText(request(stream, { 'content-encoding': 'gzip' })))
    expect(problem.status).toBe(413)
    expect(problem.message).toContain('Compressed')
    expect(state.pulled).toBeLessThanOrEqual(MAX_BATCH_BYTES + 64 * 1024 + 16_384)
  })

  it('refuses corrupt gzip with 400', async () => {
    const response = await collector().fetch(request(new Uint8Array([1, 2, 3, 4, 5]), { 'content-encoding': 'gzip' }))
    expect(response.status).toBe(400)
    expect(((await response.json()) as any).error.code).toBe('INVALID_ENCODING')
  })

  it('refuses an unknown encoding with 415', async () => {
    expect((await collector().fetch(request('{}', { 'content-encoding': 'br' }))).status).toBe(415)
  })
})

describe('UTF-8', () => {
  it('decodes a multi-byte character split across chunks', async () => {
    const bytes = new TextEncoder().encode('{"é":"😀"}')
    const { stream } = countedStream([bytes.subarray(0, 3), bytes.subarray(3, 9), bytes.subarray(9)])
    expect(await readBodyText(request(stream))).toBe('{"é":"😀"}')
  })

  it('refuses invalid UTF-8 with 400', async () => {
    const bytes = new Uint8Array([...new TextEncoder().encode('{"batch":["'), 0xff, 0xfe, ...new TextEncoder().encode('"]}')])
    const response = await collector().fetch(request(bytes))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'INVALID_ENCODING', message: 'Request body is not valid UTF-8.' } })
  })

  it('refuses a truncated multi-byte character at the end', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}').subarray(0, 7)
    const problem = await problemOf(readBodyText(request(bytes)))
    expect(problem.code).toBe('INVALID_ENCODING')
  })
})

describe('readBodyText on a body held in memory (the Node listener read it whole)', () => {
  const held = (bytes: Uint8Array, headers: Record<string, string> = {}) =>
    holdRequestBody(new Request('http://c.test/v1/batch', { method: 'POST', headers }), bytes)

  it('decodes it as the same text a stream gives', async () => {
    expect(await readBodyText(held(new TextEncoder().encode('{"a":"é"}')))).toBe('{"a":"é"}')
  })

  it('applies the same limit, UTF-8 check and decompression', async () => {
    expect((await problemOf(readBodyText(held(new Uint8Array(11)), 10))).status).toBe(413)
    expect((await problemOf(readBodyText(held(new Uint8Array([0x7b, 0xff, 0x7d]))))).code).toBe('INVALID_ENCODING')
    expect(await readBodyText(held(gzipSync('{"z":1}'), { 'content-encoding': 'gzip' }))).toBe('{"z":1}')
    expect((await problemOf(readBodyText(held(gzipSync('x'.repeat(11)), { 'content-encoding': 'gzip' }), 10))).status).toBe(413)
  })
})
