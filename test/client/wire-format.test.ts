import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { BATCH_URL, collector, createTestClient, ENDPOINT, http, HttpResponse, installServer, server, trackInput, WRITE_KEY } from '../helpers/client.js'

installServer()

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const LIBRARY = { name: 'isomorphic-analytics', version }

describe('request', () => {
  it('is a POST to ${endpoint}/v1/batch with Basic auth and a JSON content type', async () => {
    let method = ''
    let url = ''
    const wire = collector((req) => HttpResponse.json({ success: true }))
    server.use(http.all(`${ENDPOINT}/*`, ({ request }) => {
      method = request.method
      url = request.url
      return undefined
    }))
    const client = createTestClient()
    client.track(trackInput())
    await client.flush()
    expect(method).toBe('POST')
    expect(url).toBe(BATCH_URL)
    const { headers } = wire.requests[0]
    expect(headers.get('authorization')).toBe(`Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`)
    expect(headers.get('content-type')).toBe('application/json')
    expect(headers.get('content-encoding')).toBeNull()
  })

  it('encodes a non-ASCII write key as UTF-8 in Basic auth', async () => {
    const wire = collector()
    const client = new Client('ключ-🔑', { endpoint: ENDPOINT, debug: false })
    client.track(trackInput())
    await client.close()
    const auth = wire.requests[0].headers.get('authorization')!
    expect(auth).toBe(`Basic ${Buffer.from('ключ-🔑:', 'utf8').toString('base64')}`)
    expect(Buffer.from(auth.slice(6), 'base64').toString('utf8')).toBe('ключ-🔑:')
  })
})

describe('body', () => {
  it('is {batch, sentAt, context.library}, each message stamped', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-22T10:00:00.000Z') })
    const wire = collector()
    const client = createTestClient()
    const a = client.identify({ userId: 'u1', traits: { name: 'Ada' } })
    const b = client.track(trackInput(2))
    const c = client.alias({ userId: 'u1', previousId: 'anon' })
    await vi.advanceTimersByTimeAsync(1234)
    const flushed = client.flush()
    await vi.advanceTimersByTimeAsync(0)
    expect(await flushed).toEqual({ delivered: 3, failed: 0 })
    expect(wire.requests).toHaveLength(1)
    const { body, text } = wire.requests[0]
    expect(Object.keys(body)).toEqual(['batch', 'sentAt', 'context'])
    expect(body.sentAt).toBe('2026-11-22T10:00:01.234Z')
    expect(body.context).toEqual({ library: LIBRARY })
    expect(body.batch).toEqual([a, b, c])
    for (const message of body.batch) {
      expect(message).toMatchObject({
        type: expect.any(String),
        messageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        timestamp: '2026-11-22T10:00:00.000Z',
        context: { library: LIBRARY },
      })
    }
    // Assembled from each message's one serialisation, in order.
    expect(text).toBe(`{"batch":[${[a, b, c].map((m) => JSON.stringify(m)).join(',')}],"sentAt":"2026-11-22T10:00:01.234Z","context":${JSON.stringify({ library: LIBRARY })}}`)
  })
})

describe('plainText (the browser CORS-simple form)', () => {
  it('sends Content-Type text/plain with writeKey in the body and no Authorization', async () => {
    const wire = collector()
    const client = createTestClient({ plainText: true })
    const sent = client.track(trackInput())
    await client.flush()
    const { headers, body, text } = wire.requests[0]
    expect(headers.get('content-type')).toBe('text/plain')
    expect(headers.get('authorization')).toBeNull()
    expect(body.writeKey).toBe(WRITE_KEY)
    expect(body.batch).toEqual([sent])
    expect(JSON.parse(text)).toEqual({ batch: [sent], sentAt: expect.any(String), context: { library: LIBRARY }, writeKey: WRITE_KEY })
  })

  it('is off in Node by default', async () => {
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput())
    await client.flush()
    expect(wire.requests[0].body).not.toHaveProperty('writeKey')
  })
})
