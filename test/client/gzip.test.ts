import { gunzipSync } from 'node:zlib'
import { describe, expect, it, vi } from 'vitest'
import { collector, createTestClient, HttpResponse, installServer, settle, trackInput } from '../helpers/client.js'

installServer()

describe('gzip: true', () => {
  it('sends Content-Encoding: gzip, and the body gunzips to the same JSON', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-22T10:00:00.000Z') })
    const wire = collector()
    const client = createTestClient({ gzip: true })
    const sent = [client.track(trackInput(0, { properties: { text: 'ünïcødé 😀' } })), client.identify({ userId: 'u', traits: { a: 1 } })]
    expect(await settle(client.flush(), 1000, 1)).toEqual({ delivered: 2, failed: 0 })
    const { headers, bytes } = wire.requests[0]
    expect(headers.get('content-encoding')).toBe('gzip')
    expect(headers.get('content-type')).toBe('application/json')
    expect(headers.get('authorization')).toMatch(/^Basic /)
    expect(bytes[0]).toBe(0x1f)
    expect(bytes[1]).toBe(0x8b)
    const json = JSON.parse(gunzipSync(bytes).toString('utf8'))
    expect(json).toEqual({ batch: sent, sentAt: '2026-11-22T10:00:00.000Z', context: { library: sent[0].context.library } })
  })

  it('works where Blob has no stream() (jsdom), as long as CompressionStream exists', async () => {
    const wire = collector()
    const stream = vi.spyOn(Blob.prototype, 'stream').mockImplementation(() => {
      throw new TypeError('(intermediate value).stream is not a function')
    })
    try {
      const client = createTestClient({ gzip: true })
      client.track(trackInput(0))
      expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
      expect(wire.requests[0].headers.get('content-encoding')).toBe('gzip')
    } finally {
      stream.mockRestore()
    }
  })

  it('applies the 500,000-byte limit before compression', async () => {
    const wire = collector()
    const client = createTestClient({ gzip: true, flushAt: 100 })
    // Highly compressible: 40 × ~31 KB would fit one request after gzip, but not before.
    for (let i = 0; i < 40; i++) client.track(trackInput(i, { properties: { blob: 'z'.repeat(31_000) } }))
    expect(await client.flush()).toEqual({ delivered: 40, failed: 0 })
    expect(wire.requests.length).toBeGreaterThanOrEqual(3)
    let total = 0
    for (const r of wire.requests) {
      const plain = gunzipSync(r.bytes)
      expect(plain.byteLength).toBeLessThanOrEqual(500_000)
      expect(r.bytes.byteLength).toBeLessThan(plain.byteLength)
      total += JSON.parse(plain.toString('utf8')).batch.length
    }
    expect(total).toBe(40)
  })

  it('a retry re-sends the same compressed bytes', async () => {
    vi.useFakeTimers()
    const wire = collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 500 }) : HttpResponse.json({})))
    const client = createTestClient({ gzip: true })
    client.track(trackInput())
    expect(await settle(client.flush())).toEqual({ delivered: 1, failed: 0 })
    expect(wire.requests).toHaveLength(2)
    expect(Buffer.from(wire.requests[1].bytes).equals(Buffer.from(wire.requests[0].bytes))).toBe(true)
  })

  it('sends plain JSON where the runtime has no CompressionStream', async () => {
    vi.stubGlobal('CompressionStream', undefined)
    const wire = collector()
    const client = createTestClient({ gzip: true })
    const sent = client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(wire.requests[0].headers.get('content-encoding')).toBeNull()
    expect(wire.requests[0].body.batch).toEqual([sent])
  })
})

describe('gzip: false (the default)', () => {
  it('sends plain JSON', async () => {
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput())
    await client.flush()
    expect(wire.requests[0].headers.get('content-encoding')).toBeNull()
    expect(wire.requests[0].body.batch).toHaveLength(1)
  })
})
