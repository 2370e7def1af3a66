import { gzipSync } from 'node:zlib'
import { describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { createFakeCollector } from '../../src/testing/index.js'
import { installMswServer } from './support.js'

const server = installMswServer()

const ENDPOINT = 'https://api.segment.io'
const auth = (key: string) => ({ authorization: `Basic ${btoa(`${key}:`)}`, 'content-type': 'application/json' })
const message = { type: 'track', event: 'Signed Up', userId: 'u1' }

function postBatch(body: unknown, key = 'any-key', endpoint = ENDPOINT, extra: Record<string, string> = {}) {
  return fetch(`${endpoint}/v1/batch`, {
    method: 'POST',
    headers: { ...auth(key), ...extra },
    body: (typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body)) as BodyInit,
  })
}

function install(options?: Parameters<typeof createFakeCollector>[0]) {
  const fake = createFakeCollector(options)
  server.use(...fake.handlers)
  return fake
}

describe('createFakeCollector', () => {
  it('records what a real Client sends: batches and messages', async () => {
    const fake = install()
    const client = new Client('my-key', { flushAt: 2 })
    client.identify({ userId: 'u1', traits: { plan: 'pro' } })
    client.track({ userId: 'u1', event: 'Upgraded', properties: { from: 'free' } })
    expect(await client.flush()).toMatchObject({ delivered: 2, failed: 0 })
    await client.close()
    expect(fake.batches).toHaveLength(1)
    expect(fake.batches[0]).toMatchObject({ batch: [{ type: 'identify' }, { type: 'track' }] })
    expect(fake.messages).toMatchObject([
      { type: 'identify', userId: 'u1', traits: { plan: 'pro' } },
      { type: 'track', userId: 'u1', event: 'Upgraded', properties: { from: 'free' } },
    ])
    expect(fake.messages[1].context).toMatchObject({ library: { name: 'isomorphic-analytics' } })
    expect(fake.requests[0]).toMatchObject({ method: 'POST', path: '/v1/batch', status: 200, scripted: false })
  })

  it('validates with the collector rules: an invalid message is a 400 and is not recorded', async () => {
    const fake = install()
    const response = await postBatch({ batch: [{ type: 'track', userId: 'u1' }] })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      success: false,
      error: { code: 'VALIDATION', message: "You must pass 'event'.", field: 'batch[0].event' },
    })
    expect(fake.batches).toEqual([])
    expect(fake.messages).toEqual([])
    expect(fake.requests).toHaveLength(1)
    expect(fake.requests[0].status).toBe(400)
  })

  it('accepts any write key by default, but not a missing one', async () => {
    install()
    expect((await postBatch({ batch: [message] }, 'whatever')).status).toBe(200)
    const anonymous = await fetch(`${ENDPOINT}/v1/batch`, { method: 'POST', body: JSON.stringify({ batch: [message] }) })
    expect(anonymous.status).toBe(401)
  })

  it('accepts only the given write key when one is set', async () => {
    const fake = install({ writeKey: 'right' })
    expect((await postBatch({ batch: [message] }, 'wrong')).status).toBe(401)
    expect((await postBatch({ batch: [message] }, 'right')).status).toBe(200)
    expect(fake.batches).toHaveLength(1)
  })

  it('checks its options as the Client does: an unknown key, a bad endpoint or writeKey is a ConfigError naming it', () => {
    const refused = (options: unknown) => {
      try {
        createFakeCollector(options as Parameters<typeof createFakeCollector>[0])
      } catch (error) {
        return { name: (error as Error).name, field: (error as { option?: string }).option, message: (error as Error).message }
      }
      throw new Error(`accepted ${JSON.stringify(options)}`)
    }
    expect(refused({ writekey: 'only-this-key' })).toEqual({ name: 'ConfigError', field: 'writekey', message: 'Unknown option `writekey` (did you mean `writeKey`?); known: writeKey, endpoint.' })
    expect(refused({ endpoint: 'http://localhost:8700/v1/batch' })).toMatchObject({ field: 'endpoint', message: "Expected `endpoint` to be the base URL (`/v1/batch` is added): pass `'http://localhost:8700'`, not `'http://localhost:8700/v1/batch'`." })
    expect(refused({ endpoint: 'not a url' })).toMatchObject({ field: 'endpoint', message: expect.stringMatching(/^Expected `endpoint` to be an http\(s\) URL/) })
    expect(refused({ endpoint: 'ftp://x' })).toMatchObject({ field: 'endpoint' })
    // Its endpoint goes through the Client's check: a password in one that does not parse is not shown.
    const leaky = refused({ endpoint: 'https://user:s3cretpass@collector.example.com:99999' })
    expect(leaky).toMatchObject({ field: 'endpoint', message: 'Expected `endpoint` to be an http(s) URL without credentials, a query or fragment, got `"…collector.example.com:99999"`.' })
    expect(refused({ endpoint: 'localhost:8700' })).toMatchObject({ field: 'endpoint', message: "Expected `endpoint` to be an http(s) URL without credentials, a query or fragment, got a `localhost:` URL (did you mean `'http://localhost:8700'`?)." })
    expect(refused({ writeKey: '' })).toMatchObject({ field: 'writeKey', message: 'Expected `writeKey` to be a non-empty string, got `""`.' })
    expect(refused(null)).toMatchObject({ field: 'options' })
    // A path prefix is still fine.
    expect(() => createFakeCollector({ endpoint: 'http://localhost:8700/analytics/' })).not.toThrow()
  })

  it('serves the single calls too', async () => {
    const fake = install()
    const response = await fetch(`${ENDPOINT}/v1/identify`, { method: 'POST', headers: auth('k'), body: JSON.stringify({ userId: 'u1' }) })
    expect(response.status).toBe(200)
    expect(fake.messages).toMatchObject([{ type: 'identify', userId: 'u1' }])
  })

  it('answers scripted replies in order (FIFO), then the real handler', async () => {
    const fake = install()
    fake.reply({ status: 503 }, { status: 429, headers: { 'Retry-After': '7' } }, { status: 202, body: 'queued' })
    const first = await postBatch({ batch: [message] })
    const second = await postBatch({ batch: [message] })
    const third = await postBatch({ batch: [message] })
    const fourth = await postBatch({ batch: [message] })
    expect([first.status, second.status, third.status, fourth.status]).toEqual([503, 429, 202, 200])
    expect(second.headers.get('retry-after')).toBe('7')
    expect(await third.text()).toBe('queued')
    expect(fake.requests.map((r) => r.scripted)).toEqual([true, true, true, false])
    expect(fake.batches).toHaveLength(1)
  })

  it('scripts a network error: fetch rejects', async () => {
    const fake = install()
    fake.reply({ networkError: true })
    await expect(postBatch({ batch: [message] })).rejects.toThrow(TypeError)
    expect(fake.requests[0]).toMatchObject({ status: 0, scripted: true })
    expect((await postBatch({ batch: [message] })).status).toBe(200)
  })

  it('delays an answer under fake timers', async () => {
    vi.useFakeTimers()
    const fake = install()
    fake.reply({ status: 500, delayMs: 10_000 })
    let settled = false
    const pending = postBatch({ batch: [message] }).then((r) => ((settled = true), r.status))
    await vi.advanceTimersByTimeAsync(9_999)
    expect(settled).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(await pending).toBe(500)
  })

  it('with only delayMs, lets the real handler answer after the delay', async () => {
    vi.useFakeTimers()
    const fake = install()
    fake.reply({ delayMs: 2_000 })
    let status = 0
    const pending = postBatch({ batch: [message] }).then((r) => (status = r.status))
    await vi.advanceTimersByTimeAsync(1_999)
    expect(status).toBe(0)
    await vi.advanceTimersByTimeAsync(1)
    await pending
    expect(status).toBe(200)
    expect(fake.messages).toHaveLength(1)
  })

  it('lets a client retry through scripted faults (fake timers) and records each attempt', async () => {
    vi.useFakeTimers()
    const fake = install()
    fake.reply({ status: 503 }, { networkError: true })
    const client = new Client('k', { flushAt: 1 })
    client.track({ userId: 'u1', event: 'Retried' })
    const flushed = client.flush()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(await flushed).toEqual({ delivered: 1, failed: 0 })
    await client.close()
    expect(fake.requests.map((r) => r.status)).toEqual([503, 0, 200])
    // Every attempt carried the same bytes.
    expect(new Set(fake.requests.map((r) => r.body)).size).toBe(1)
    expect(fake.messages).toMatchObject([{ event: 'Retried' }])
  })

  it('works at a custom endpoint with a path prefix and trailing slash', async () => {
    const endpoint = 'http://localhost:8700/analytics/'
    const fake = install({ endpoint })
    expect((await postBatch({ batch: [message] }, 'k', 'http://localhost:8700/analytics')).status).toBe(200)
    expect(fake.requests[0].path).toBe('/v1/batch')
  })

  it('records gzip bodies decompressed', async () => {
    const fake = install()
    const body = JSON.stringify({ batch: [message] })
    const response = await postBatch(new Uint8Array(gzipSync(body)), 'k', ENDPOINT, { 'content-encoding': 'gzip' })
    expect(response.status).toBe(200)
    expect(fake.requests[0].body).toBe(body)
  })

  it('reset() forgets records and pending replies', async () => {
    const fake = install()
    await postBatch({ batch: [message] })
    fake.reply({ status: 500 })
    fake.reset()
    expect([fake.batches, fake.messages, fake.requests]).toEqual([[], [], []])
    expect((await postBatch({ batch: [message] })).status).toBe(200)
    expect(fake.messages).toHaveLength(1)
  })

  it('refuses a malformed scripted reply', () => {
    const fake = createFakeCollector()
    expect(() => fake.reply({ status: 99 })).toThrow('`status` to be an integer from 200 to 599')
    expect(() => fake.reply({ delayMs: -1 })).toThrow('`delayMs`')
  })
})
