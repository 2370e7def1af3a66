/**
 * Inputs at the edges: options and messages from another realm (a `vm` context, like an iframe),
 * calendar-exact timestamps, the nesting limit, and one drop report per synchronous burst. The
 * collector runs the same validator and serialiser, so its half is checked here too.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createContext, runInContext, runInNewContext } from 'node:vm'
import { describe, expect, it, vi } from 'vitest'
import { createCollector } from '../../src/collector/index.js'
import { Client, ConfigError, QueueFullError, ValidationError } from '../../src/index.js'
import { MAX_DEPTH } from '../../src/limits.js'
import { collector, createTestClient, ENDPOINT, installServer, listen, trackInput, WRITE_KEY } from '../helpers/client.js'

installServer()

function thrown(fn: () => unknown): Error & { field?: string; option?: string } {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

/** `{ a: { a: … } }`, `levels` objects deep. */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {}
  for (let i = 1; i < levels; i++) value = { a: value }
  return value
}

describe('another realm (vm context)', () => {
  it('accepts options and messages whose objects and Dates come from another realm', async () => {
    const wire = collector()
    const foreign = runInNewContext(`({
      options: { endpoint: ${JSON.stringify(ENDPOINT)}, flushAt: 2, debug: false, context: { app: { name: 'vm' } } },
      message: { userId: 'u', event: 'From vm', properties: { list: [1, 2], nested: { ok: true } }, timestamp: new Date(0) },
    })`) as { options: object; message: { userId: string; event: string } }
    expect(Object.getPrototypeOf(foreign.options)).not.toBe(Object.prototype)
    const client = createTestClient(foreign.options)
    const sent = client.track(foreign.message)
    expect(sent.timestamp).toBe('1970-01-01T00:00:00.000Z')
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(wire.messages()[0]).toMatchObject({
      event: 'From vm', properties: { list: [1, 2], nested: { ok: true } }, context: { app: { name: 'vm' } }, timestamp: '1970-01-01T00:00:00.000Z',
    })
  })

  it('the one-<script> build evaluated in a vm context accepts options from this realm', async () => {
    const wire = collector()
    const script = readFileSync(join(import.meta.dirname, '../../dist/isomorphic-analytics.global.js'), 'utf8')
    const sandbox = createContext({
      fetch, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask, console, crypto, btoa, performance,
      TextEncoder, URL, AbortController, AbortSignal, DOMException, Headers, Request, Response, Blob,
    })
    runInContext(script, sandbox)
    const { Client } = (sandbox as { IsomorphicAnalytics: typeof import('../../src/index.js') }).IsomorphicAnalytics
    const client = new Client(WRITE_KEY, { endpoint: ENDPOINT, debug: false, plainText: false })
    client.track({ userId: 'u', event: 'From the script build', timestamp: new Date(0) })
    expect(await client.close()).toEqual({ delivered: 1, failed: 0 })
    expect(wire.messages().map((m) => m.event)).toEqual(['From the script build'])
  })

  it('still refuses what is not a plain object, naming it in good grammar', () => {
    expect(thrown(() => new Client(WRITE_KEY, new Map() as never)).message).toBe('Expected `options` to be an object, got a Map.')
    expect(thrown(() => new Client(WRITE_KEY, [] as never)).message).toBe('Expected `options` to be an object, got an array.')
    class Settings {}
    expect(thrown(() => createTestClient({ context: new Settings() } as never))).toMatchObject({ option: 'context', message: 'Expected `context` to be an object, got a Settings.' })
    expect(thrown(() => createTestClient({ context: new Error('x') } as never)).message).toBe('Expected `context` to be an object, got an Error.')
    expect(thrown(() => createTestClient({ context: runInNewContext('new Map()') } as never))).toBeInstanceOf(ConfigError)
  })
})

describe('calendar-exact timestamps', () => {
  const impossible = ['2024-02-30T00:00:00Z', '2023-02-29', '2024-04-31T12:00:00.000Z', '2100-02-29T00:00:00Z', '2026-06-31 10:00:00+02:00']
  const real = ['2024-02-29T00:00:00Z', '2000-02-29', '2026-01-31T23:59:59.999Z', '2026-12-31', '2026-04-30T10:00:00+02:00']

  it.each(impossible)('the client refuses %s with a ValidationError naming `timestamp`', (timestamp) => {
    const client = createTestClient()
    const error = thrown(() => client.track(trackInput(0, { timestamp })))
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.field).toBe('timestamp')
    expect(error.message).toContain(timestamp)
    expect(client.stats().queued).toBe(0)
  })

  it.each(real)('the client keeps %s as given', (timestamp) => {
    expect(createTestClient().track(trackInput(0, { timestamp })).timestamp).toBe(timestamp)
  })

  it('the collector answers 400 naming the field, and accepts real dates', async () => {
    const c = createCollector({ sources: [{ writeKey: 'KEY', name: 'web' }] })
    const postBody = (body: object) => c.fetch(new Request('http://collector.test/v1/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
      body: JSON.stringify(body),
    }))
    const post = (timestamp: string) => postBody({ batch: [{ type: 'track', event: 'e', userId: 'u', timestamp }] })
    const refused = await post('2024-02-30T00:00:00Z')
    expect(refused.status).toBe(400)
    expect((await refused.json()).error).toMatchObject({ code: 'VALIDATION', field: 'batch[0].timestamp' })
    expect((await post('2024-02-29T00:00:00Z')).status).toBe(200)
    // The event-time fields too: originalTimestamp, and the batch's sentAt that corrects it.
    const original = await postBody({ batch: [{ type: 'track', event: 'e', userId: 'u', originalTimestamp: '2023-02-29T10:00:00Z' }] })
    expect(original.status).toBe(400)
    expect((await original.json()).error).toMatchObject({ code: 'VALIDATION', field: 'batch[0].originalTimestamp' })
    const sentAt = await postBody({ sentAt: '2026-04-31T10:00:00Z', batch: [{ type: 'track', event: 'e', userId: 'u', originalTimestamp: '2026-04-30T10:00:00Z' }] })
    expect(sentAt.status).toBe(400)
    expect((await sentAt.json()).error).toMatchObject({ code: 'VALIDATION', field: 'sentAt' })
    await c.close()
  })
})

describe('nesting limit', () => {
  it(`accepts ${MAX_DEPTH} levels counting the message, refuses ${MAX_DEPTH + 1} with a clear error naming the field`, () => {
    const client = createTestClient()
    // The message is level 1, `properties` level 2.
    expect(() => client.track(trackInput(0, { properties: nested(MAX_DEPTH - 1) }))).not.toThrow()
    const error = thrown(() => client.track(trackInput(0, { properties: nested(MAX_DEPTH) })))
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.field).toBe('properties')
    expect(error.message).toBe(`\`properties\` nests objects and arrays too deep: a message may nest at most ${MAX_DEPTH} levels (the message itself is the first).`)
  })

  it('arrays count as levels; brackets inside strings do not', () => {
    const client = createTestClient()
    let list: unknown = []
    for (let i = 2; i < MAX_DEPTH; i++) list = [list]
    expect(() => client.track(trackInput(0, { properties: { list } }))).toThrow(/nests objects and arrays too deep/)
    expect(() => client.track(trackInput(0, { properties: { text: '{['.repeat(500), quote: '"\\{'.repeat(100) } }))).not.toThrow()
  })

  it('12,000 levels (24 KB, under the size limit) is the same clear error, not a stack overflow', () => {
    const client = createTestClient()
    for (const field of ['properties', 'context']) {
      const error = thrown(() => client.track(trackInput(0, { [field]: nested(12_000) })))
      expect(error).toBeInstanceOf(ValidationError)
      expect(error.field).toBe(field)
      expect(error.message).not.toMatch(/call stack/i)
    }
    expect(client.stats()).toMatchObject({ queued: 0, dropped: 0 })
  })

  it('the collector applies the same limit', async () => {
    const c = createCollector({ sources: [{ writeKey: 'KEY', name: 'web' }] })
    const response = await c.fetch(new Request('http://collector.test/v1/track', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
      body: JSON.stringify({ event: 'e', userId: 'u', properties: nested(MAX_DEPTH) }),
    }))
    expect(response.status).toBe(400)
    expect((await response.json()).error).toMatchObject({ code: 'VALIDATION', field: 'properties' })
    await c.close()
  })
})

describe('drop reports', () => {
  it('a synchronous burst past maxQueueSize is reported once, with every dropped message and the count', async () => {
    vi.useFakeTimers()
    collector()
    const client = createTestClient({ maxQueueSize: 10, flushAt: 100 })
    const events = listen(client)
    const sent = Array.from({ length: 20_000 }, (_, i) => client.track(trackInput(i)))
    expect(client.stats()).toMatchObject({ queued: 10, dropped: 19_990 })
    await vi.advanceTimersByTimeAsync(0)
    expect(events.error).toHaveLength(1)
    expect(events.error[0]).toBeInstanceOf(QueueFullError)
    expect(events.error[0].message).toBe('Queue is full (maxQueueSize 10); 19990 messages dropped.')
    expect(events.error[0].messages).toEqual(sent.slice(10))
    // A later burst gets its own report.
    client.track(trackInput(0))
    await vi.advanceTimersByTimeAsync(0)
    expect(events.error.map((e) => e.messages.length)).toEqual([19_990, 1])
    expect(events.error[1].message).toBe('Queue is full (maxQueueSize 10); message dropped.')
  })

  it('without an error listener, a burst logs one line', async () => {
    vi.useFakeTimers()
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    collector()
    const client = createTestClient({ maxQueueSize: 5, flushAt: 100 })
    for (let i = 0; i < 10_000; i++) client.track(trackInput(i))
    await vi.advanceTimersByTimeAsync(0)
    expect(consoleError).toHaveBeenCalledTimes(1)
    expect(String(consoleError.mock.calls[0][0])).toContain('9995 messages not delivered')
  })
})

