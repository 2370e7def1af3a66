import * as v from 'valibot'
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { Client, ConfigError, isValidationError, ValidationError, type JsonObject, type StandardSchemaV1 } from '../../src/index.js'
import { fieldPath } from '../../src/message/field-path.js'
import { collector, createTestClient, ENDPOINT, installServer, listen } from '../helpers/client.js'

installServer()

const orderCompleted = z.object({
  orderId: z.string(),
  total: z.number(),
  currency: z.enum(['EUR', 'USD']),
  items: z.array(z.object({ sku: z.string(), quantity: z.number().int() })),
  coupon: z.string().optional(),
})
const order = { orderId: 'o-1', total: 9.5, currency: 'EUR', items: [{ sku: 'A', quantity: 1 }] }

/** A Standard Schema whose verdicts the test hands out, in any order, with `resolve(i, ok)`. */
function deferredSchema() {
  const pending: Array<(ok: boolean) => void> = []
  const schema: StandardSchemaV1<JsonObject, unknown> = {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) => new Promise((resolve) => {
        pending.push((ok) => resolve(ok ? { value } : { issues: [{ message: 'Refused by the test', path: ['flag'] }] }))
      }),
    },
  }
  return { schema, resolve: (i: number, ok: boolean) => pending[i](ok) }
}

describe('option `schema` (Standard Schema validators per event)', () => {
  it('sends a track that passes; reports one that fails through error, naming event and field, and does not send it', async () => {
    const received = collector()
    const client = createTestClient({ schema: { 'Order Completed': orderCompleted } })
    const events = listen(client)
    client.track({ event: 'Order Completed', userId: 'u', properties: order })
    const bad = client.track({ event: 'Order Completed', userId: 'u', properties: { ...order, total: '9.50' } })
    client.track({ event: 'Unplanned', userId: 'u', properties: { anything: true } })
    expect(await client.flush()).toEqual({ delivered: 2, failed: 0 })
    expect(received.messages().map((m) => [m.event, m.properties])).toEqual([
      ['Order Completed', order],
      ['Unplanned', { anything: true }],
    ])
    expect(events.error).toHaveLength(1)
    const error = events.error[0] as ValidationError
    expect(error).toBeInstanceOf(ValidationError)
    expect(isValidationError(error)).toBe(true)
    expect(error.field).toBe('properties.total')
    expect(error.message).toMatch(/^Event "Order Completed" does not match its schema: properties\.total: /)
    expect(error.messages).toEqual([bad])
    // Accepted by the call, then reported: counted as failed, as every reported message is.
    expect(client.stats()).toMatchObject({ delivered: 2, failed: 1, dropped: 0 })
  })

  it('names nested fields and lists every issue', async () => {
    collector()
    const client = createTestClient({ schema: { 'Order Completed': orderCompleted } })
    const events = listen(client)
    client.track({ event: 'Order Completed', userId: 'u', properties: { ...order, currency: 'GBP', items: [{ sku: 1, quantity: 1.5 }] } })
    await client.flush()
    const [error] = events.error as ValidationError[]
    expect(error.field).toBe('properties.currency')
    expect(error.message).toContain('properties.currency: ')
    expect(error.message).toContain('properties.items[0].sku: ')
    expect(error.message).toContain('properties.items[0].quantity: ')
  })

  it('checks a track without properties as {} (required keys are missing)', async () => {
    const received = collector()
    const client = createTestClient({ schema: { 'Order Completed': orderCompleted } })
    const events = listen(client)
    client.track({ event: 'Order Completed', userId: 'u' })
    expect(await client.flush()).toEqual({ delivered: 0, failed: 0 })
    expect(received.requests).toHaveLength(0)
    expect((events.error[0] as ValidationError).field).toBe('properties.orderId')
  })

  it('works with valibot, and sends the properties as the caller wrote them', async () => {
    const received = collector()
    const client = createTestClient({ schema: { Searched: v.object({ query: v.pipe(v.string(), v.trim()) }) } })
    const events = listen(client)
    client.track({ event: 'Searched', userId: 'u', properties: { query: ' shoes ' } })
    client.track({ event: 'Searched', userId: 'u', properties: { query: 3 } })
    await client.flush()
    expect(received.messages().map((m) => m.properties)).toEqual([{ query: ' shoes ' }])
    expect((events.error[0] as ValidationError).field).toBe('properties.query')
  })

  it('reports a validator that throws as a ValidationError with the cause, and carries on', async () => {
    const received = collector()
    const boom = new Error('validator bug')
    const throwing: StandardSchemaV1<JsonObject, unknown> = { '~standard': { version: 1, vendor: 'test', validate: () => { throw boom } } }
    const client = createTestClient({ schema: { A: throwing } })
    const events = listen(client)
    client.track({ event: 'A', userId: 'u' })
    client.track({ event: 'B', userId: 'u' })
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(received.messages().map((m) => m.event)).toEqual(['B'])
    expect(events.error[0].message).toBe('The schema of event "A" threw: validator bug')
    expect(events.error[0].cause).toBe(boom)
  })

  it('reports a validator whose result is not a Standard Schema result (sync or async), never throws from track(), and sends the rest', async () => {
    const received = collector()
    const broken = (validate: () => unknown): StandardSchemaV1<JsonObject, unknown> =>
      ({ '~standard': { version: 1, vendor: 'test', validate: validate as StandardSchemaV1['~standard']['validate'] } })
    const client = createTestClient({
      schema: { Sync: broken(() => undefined), Async: broken(() => Promise.resolve(null)), Odd: broken(() => ({ issues: 'bad' })), Empty: broken(() => ({ issues: [] })) },
    })
    const events = listen(client)
    expect(() => client.track({ event: 'Sync', userId: 'u' })).not.toThrow()
    client.track({ event: 'Async', userId: 'u' })
    client.track({ event: 'Odd', userId: 'u' })
    client.track({ event: 'Empty', userId: 'u' })
    client.track({ event: 'After', userId: 'u' })
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(received.messages().map((m) => m.event)).toEqual(['After'])
    expect(events.error.map((e) => e.message)).toEqual([
      'The schema of event "Sync" answered `undefined`, not { value } or { issues }.',
      'The schema of event "Async" answered `null`, not { value } or { issues }.',
      expect.stringMatching(/^The schema of event "Odd" threw: /),
      // A failure that lists no issue (Standard Schema: `issues` present means failed).
      'Event "Empty" does not match its schema: no issue given.',
    ])
  })

  it('does not look up inherited names ("constructor" is not a schema)', async () => {
    const received = collector()
    const client = createTestClient({ schema: { A: orderCompleted } })
    client.track({ event: 'constructor', userId: 'u' })
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(received.messages()).toHaveLength(1)
  })
})

describe('async validators', () => {
  it('keep call order: messages after a pending verdict wait for it, whatever their type', async () => {
    const received = collector()
    const { schema, resolve } = deferredSchema()
    const client = createTestClient({ schema: { Checked: schema }, flushAt: 100 })
    const events = listen(client)
    client.track({ event: 'Checked', userId: 'u', properties: { n: 1 } })
    client.identify({ userId: 'u' })
    client.track({ event: 'Checked', userId: 'u', properties: { n: 2 } })
    client.track({ event: 'Free', userId: 'u' })
    expect(client.stats().queued).toBe(0)
    // Verdicts arrive out of order: the second first (refused), then the first (passes).
    resolve(1, false)
    await Promise.resolve()
    expect(client.stats().queued).toBe(0)
    resolve(0, true)
    // flush() counts every message tracked before it, including those awaiting a verdict.
    expect(await client.flush()).toEqual({ delivered: 3, failed: 0 })
    expect(received.messages().map((m) => `${m.type}:${m.event ?? ''}:${JSON.stringify(m.properties ?? null)}`)).toEqual([
      'track:Checked:{"n":1}',
      'identify::null',
      'track:Free:null',
    ])
    expect(events.error).toHaveLength(1)
    expect((events.error[0] as ValidationError).field).toBe('properties.flag')
    expect(events.error[0].messages[0]).toMatchObject({ event: 'Checked', properties: { n: 2 } })
  })

  it('close() delivers what was still awaiting a verdict (zod async refinement)', async () => {
    const received = collector()
    const schema = z.object({ sku: z.string() }).refine(async (p) => p.sku.startsWith('S'), { message: 'unknown SKU', path: ['sku'] })
    const client = createTestClient({ schema: { Viewed: schema } })
    const events = listen(client)
    client.track({ event: 'Viewed', userId: 'u', properties: { sku: 'S-1' } })
    client.track({ event: 'Viewed', userId: 'u', properties: { sku: 'X-1' } })
    expect(await client.close()).toEqual({ delivered: 1, failed: 0 })
    expect(received.messages().map((m) => m.properties)).toEqual([{ sku: 'S-1' }])
    expect(events.error.map((e) => [(e as ValidationError).field, e.message])).toEqual([
      ['properties.sku', 'Event "Viewed" does not match its schema: properties.sku: unknown SKU.'],
    ])
  })

  it('a verdict not in within `timeout` fails its message, and the messages behind it go on', async () => {
    vi.useFakeTimers()
    try {
      const received = collector()
      const never: StandardSchemaV1<JsonObject, unknown> = { '~standard': { version: 1, vendor: 'test', validate: () => new Promise(() => {}) } }
      const client = createTestClient({ schema: { Stuck: never }, timeout: 2_000 })
      const events = listen(client)
      client.track({ event: 'Stuck', userId: 'u' })
      client.track({ event: 'Free', userId: 'u' })
      const flushed = client.flush()
      await vi.advanceTimersByTimeAsync(2_000)
      expect(await flushed).toEqual({ delivered: 1, failed: 0 })
      expect(received.messages().map((m) => m.event)).toEqual(['Free'])
      expect(events.error.map((e) => [e.name, e.message])).toEqual([['ValidationError', 'The schema of event "Stuck" did not answer within 2000 ms.']])
      expect(client.stats()).toMatchObject({ delivered: 1, failed: 1 })
    } finally {
      vi.useRealTimers()
    }
  })

  it('close(timeoutMs) is not held past its bound by verdicts still to come: they fail (AbortedError)', async () => {
    vi.useFakeTimers()
    try {
      const received = collector()
      const { schema } = deferredSchema()
      const client = createTestClient({ schema: { Slow: schema }, timeout: 60_000 })
      const events = listen(client)
      client.track({ event: 'Slow', userId: 'u' })
      client.track({ event: 'Free', userId: 'u' })
      const closed = client.close(500)
      await vi.advanceTimersByTimeAsync(500)
      expect(await closed).toEqual({ delivered: 0, failed: 1 })
      expect(received.messages()).toEqual([])
      expect(events.error.map((e) => [e.name, e.messages.length])).toEqual([['AbortedError', 1], ['AbortedError', 1]])
      expect(events.error[0].message).toBe('close() ran out of time before the schema of event "Slow" answered.')
      expect(client.stats()).toMatchObject({ failed: 2, queued: 0, inFlight: 0 })
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('schema option checks', () => {
  it('throws a ConfigError naming the entry that is not a Standard Schema', () => {
    const make = (schema: unknown) => () => new Client('k', { endpoint: ENDPOINT, schema: schema as never })
    expect(make({ 'Order Completed': { parse: () => 1 } })).toThrow(ConfigError)
    expect(make({ 'Order Completed': { parse: () => 1 } })).toThrow(
      'Expected `schema["Order Completed"]` to be a Standard Schema v1 validator (zod, valibot, arktype…), got an object.',
    )
    expect(make([orderCompleted])).toThrow('Expected `schema` to be an object, got an array.')
    expect(make({ A: null })).toThrow(/`schema\["A"\]`.*got `null`/)
  })
})

describe('fieldPath', () => {
  it('renders Standard Schema paths (keys or {key} segments) as one field', () => {
    expect(fieldPath(undefined)).toBe('properties')
    expect(fieldPath(['a', 0, { key: 'b' }, 'with space', { key: 2 }])).toBe('properties.a[0].b["with space"][2]')
  })
})
