/**
 * What real clients of the tracking API need from the collector: integers beyond 2^53 forwarded
 * digit for digit (and signed as sent), event time by the API's rules, and their ways in
 * (analytics.js's `/v1/m`, analytics-ruby's `/v1/import`, RudderStack's form-encoded gzip and its
 * beacon `?writeKey=`).
 */
import { gzipSync } from 'node:zlib'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { verifySignature } from '../../../src/webhooks/index.js'
import { basic, forwardingCollector, KEY, post, track, until } from '../helpers.js'

afterEach(() => vi.useRealTimers())

const INT64_MAX = '9223372036854775807'
const INT64_MIN = '-9223372036854775808'

/** A JSON body text with raw number tokens spliced in (JS numbers cannot hold them). */
const rawBody = (template: Record<string, unknown>, numbers: Record<string, string>) =>
  Object.entries(numbers).reduce((text, [name, digits]) => text.replaceAll(`"@${name}"`, digits), JSON.stringify(template))

describe('numbers exactly as sent', () => {
  it('forwards int64 digits unchanged, signed over the exact bytes', async () => {
    const { collector, calls } = forwardingCollector()
    const text = rawBody(
      { batch: [track({ properties: { tweetId: '@max', min: '@min', above: '@above', list: ['@max', 1.5], price: 19.99 }, context: { ip: '1.2.3.4', id: '@max' } })] },
      { max: INT64_MAX, min: INT64_MIN, above: '9007199254740993' },
    )
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    const [call] = calls
    expect(call.body).toContain(`"tweetId":${INT64_MAX},"min":${INT64_MIN},"above":9007199254740993,"list":[${INT64_MAX},1.5],"price":19.99`)
    expect(call.body).toContain(`"id":${INT64_MAX}`)
    expect(await verifySignature(call.body, call.headers['x-signature'], 'shh')).toBe(true)
  })

  it('keeps safe numbers as numbers and long digit runs inside strings as strings', async () => {
    const { collector, calls } = forwardingCollector()
    const text = rawBody({ batch: [track({ properties: { id: '12345678901234567890', big: '@big', safe: 9007199254740991, f: 0.1 } })] }, { big: '12345678901234567890' })
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).toContain('"properties":{"id":"12345678901234567890","big":12345678901234567890,"safe":9007199254740991,"f":0.1}')
  })

  it('measures the 32,768-byte limit on the exact text', async () => {
    const { collector } = forwardingCollector()
    const text = rawBody({ batch: [track({ properties: { big: '@big', pad: 'x'.repeat(32_768) } })] }, { big: INT64_MAX })
    const response = await collector.fetch(post(text))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'MESSAGE_TOO_LARGE', field: 'batch[0]' } })
  })
})

describe("the vendor's Python and Ruby libraries: `null` for what the caller left out", () => {
  it('accepts their batches and forwards the members they did send, int64 digits included', async () => {
    const { collector, calls } = forwardingCollector()
    // analytics-python's client.py and analytics-ruby's client.rb write every member, `None`/`nil` as null.
    const python = { type: 'track', userId: 'py-user', anonymousId: null, event: 'Signed Up', properties: { id: '@max' }, context: { library: { name: 'analytics-python' } }, integrations: {}, timestamp: '2026-11-25T10:00:00.123456+00:00', messageId: 'py-1' }
    const ruby = { type: 'page', userId: null, anonymousId: 'rb-anon', name: null, category: null, properties: {}, integrations: null, context: null, timestamp: '2026-11-25T10:00:00.123+00:00', messageId: 'rb-1', options: null }
    const text = rawBody({ batch: [python, ruby], sentAt: null, context: null }, { max: INT64_MAX })
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 2, 'delivery')
    const [first, second] = calls.map((call) => call.json)
    expect(calls[0].body).toContain(`"properties":{"id":${INT64_MAX}}`)
    expect(first).toMatchObject({ type: 'track', userId: 'py-user', event: 'Signed Up', timestamp: '2026-11-25T10:00:00.123Z' })
    expect(first).not.toHaveProperty('anonymousId')
    expect(second).toMatchObject({ type: 'page', anonymousId: 'rb-anon', properties: {}, context: {} })
    expect(second).not.toHaveProperty('userId')
    expect(second).not.toHaveProperty('name')
  })

  it("takes analytics-ruby's batches where it posts them, /v1/import, as /v1/batch", async () => {
    const { collector, calls } = forwardingCollector()
    // analytics-ruby's Defaults::Request::PATH: its transport POSTs `{ batch, sentAt }` there.
    const page = { type: 'page', userId: null, anonymousId: 'rb-anon', name: 'Home', properties: { n: '@max' }, context: { library: { name: 'analytics-ruby', version: '2.5.0' } }, timestamp: '2026-11-25T10:00:00.123+00:00', messageId: 'rb-import-1' }
    const text = rawBody({ batch: [page, { ...page, messageId: 'rb-import-2' }], sentAt: '2026-11-25T10:00:01.000+00:00' }, { max: INT64_MAX })
    const response = await collector.fetch(post(text, { path: '/v1/import' }))
    expect(response.status).toBe(200)
    await until(() => calls.length === 2, 'delivery')
    expect(calls.map((call) => call.json.messageId)).toEqual(['rb-import-1', 'rb-import-2'])
    expect(calls[0].body).toContain(`"properties":{"n":${INT64_MAX}}`)
    expect(await verifySignature(calls[0].body, calls[0].headers['x-signature'], 'shh')).toBe(true)
    // Its key is checked as on /v1/batch.
    expect((await collector.fetch(post(text, { path: '/v1/import', key: 'wrong-key' }))).status).toBe(401)
  })

  it("reads analytics-ruby's numeric ids as their digits, int64 ones exactly", async () => {
    const { collector, calls } = forwardingCollector()
    // analytics-ruby's field parser checks an id is a String or a Number, and sends it as it is.
    const group = { type: 'group', userId: '@big', groupId: 7, traits: {}, messageId: 'rb-g', timestamp: '2026-11-25T10:00:00.000Z' }
    const alias = { type: 'alias', userId: 42, previousId: -3, messageId: 'rb-a', timestamp: '2026-11-25T10:00:00.000Z' }
    const text = rawBody({ batch: [track({ userId: 1.5, anonymousId: '@zero' }), group, alias] }, { big: INT64_MAX, zero: '0' })
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 3, 'delivery')
    const [first, second, third] = calls.map((call) => call.json)
    expect(first).toMatchObject({ userId: '1.5', anonymousId: '0' })
    expect(second).toMatchObject({ userId: INT64_MAX, groupId: '7' })
    expect(third).toMatchObject({ userId: '42', previousId: '-3' })
    expect(await verifySignature(calls[1].body, calls[1].headers['x-signature'], 'shh')).toBe(true)
  })

  it("reads analytics-php's empty arrays (`'integrations' => []`, PHP's json_encode of an empty array) as empty objects; a non-empty array is still refused", async () => {
    const { collector, calls } = forwardingCollector()
    const php = { type: 'track', userId: 'php-user', event: 'Signed Up', properties: [], traits: [], integrations: [], context: [], messageId: 'php-1', timestamp: '2026-11-25T10:00:00+00:00' }
    expect((await collector.fetch(post({ batch: [php], context: [], integrations: [] }))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].json).toMatchObject({ userId: 'php-user', event: 'Signed Up', properties: {}, messageId: 'php-1' })
    const listed = await collector.fetch(post({ batch: [{ ...php, messageId: 'php-2', integrations: ['Webhooks'] }] }))
    expect(listed.status).toBe(400)
    expect(await listed.json()).toMatchObject({ error: { code: 'VALIDATION', field: 'batch[0].integrations' } })
  })

  it("takes analytics-python's batches with OAuth on (a Bearer token, the write key in the body); a Bearer token alone is no write key", async () => {
    const { collector, calls } = forwardingCollector()
    const oauth = { batch: [track({ messageId: 'py-oauth-1' })], sentAt: '2026-11-25T10:00:00.000+00:00', writeKey: KEY }
    const response = await collector.fetch(post(oauth, { key: null, headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig' } }))
    expect(response.status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].json).toMatchObject({ messageId: 'py-oauth-1' })
    expect(calls[0].body).not.toContain('writeKey')
    const alone = await collector.fetch(post({ batch: [track()] }, { key: null, headers: { authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig' } }))
    expect(alone.status).toBe(401)
    expect(await alone.json()).toMatchObject({ error: { code: 'UNAUTHORIZED', message: 'Missing write key: a Bearer token (OAuth) is not one; send `writeKey` in the body, or `Authorization: Basic base64(writeKey:)`.' } })
    expect((await collector.fetch(post({ ...oauth, writeKey: 'nope' }, { key: null, headers: { authorization: 'Bearer t' } }))).status).toBe(401)
  })

  it("reads analytics-python's NaN, Infinity and -Infinity (json.dumps of a float that is not finite) as null, as JSON.stringify writes them; text in strings stays", async () => {
    const { collector, calls } = forwardingCollector()
    const text = rawBody(
      { batch: [track({ messageId: 'py-nan', properties: { ratio: '@nan', ceiling: '@inf', floor: '@minus', list: ['@nan', 1.5], note: 'NaN or -Infinity', id: '@max' } })] },
      { nan: 'NaN', inf: 'Infinity', minus: '-Infinity', max: INT64_MAX },
    )
    expect(() => JSON.parse(text)).toThrow()
    expect((await collector.fetch(post(text))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).toContain(`"properties":{"ratio":null,"ceiling":null,"floor":null,"list":[null,1.5],"note":"NaN or -Infinity","id":${INT64_MAX}}`)
    // Not JSON for another reason as well: still 400, named on the text as sent.
    const broken = await collector.fetch(post(text.replace('"py-nan"', "'py-nan'")))
    expect(broken.status).toBe(400)
    expect(await broken.json()).toMatchObject({ error: { code: 'INVALID_JSON' } })
  })

  it('still refuses an id that is neither a string nor a number, naming it', async () => {
    const { collector, calls } = forwardingCollector()
    const response = await collector.fetch(post({ batch: [track({ userId: true })] }))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'VALIDATION', field: 'batch[0].userId' } })
    await collector.close()
    expect(calls).toHaveLength(0)
  })

  it('still names a required member that is null as missing', async () => {
    const { collector, calls } = forwardingCollector()
    const response = await collector.fetch(post({ batch: [track(), track({ event: null, messageId: 'm-2' })] }))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'VALIDATION', field: 'batch[1].event', message: "You must pass 'event'." } })
    const anonymous = await collector.fetch(post({ batch: [track({ userId: null, anonymousId: null })] }))
    expect(await anonymous.json()).toMatchObject({ error: { field: 'batch[0].userId' } })
    await collector.close()
    expect(calls).toHaveLength(0)
  })
})

describe('event time', () => {
  const receivedAt = new Date('2026-11-23T12:00:00.000Z')
  const accept = async (message: Record<string, unknown>, envelope: Record<string, unknown> = {}) => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(receivedAt)
    const { collector, calls } = forwardingCollector()
    const response = await collector.fetch(post({ batch: [message], ...envelope }))
    vi.useRealTimers()
    if (response.status !== 200) return { status: response.status, body: (await response.json()) as Record<string, unknown> }
    await until(() => calls.length === 1, 'delivery')
    return { status: 200, timestamp: calls[0].json.timestamp, stats: collector.stats() }
  }
  const untimed = (extra: Record<string, unknown>) => ({ ...track(), timestamp: undefined, ...extra })

  it('corrects a device clock that is an hour slow: receivedAt − (sentAt − originalTimestamp)', async () => {
    // Queued for five minutes on a phone whose clock is an hour behind.
    const result = await accept(untimed({ originalTimestamp: '2026-11-23T10:55:00.000Z' }), { sentAt: '2026-11-23T11:00:00.000Z' })
    expect(result.timestamp).toBe('2026-11-23T11:55:00.000Z')
  })

  it("prefers the message's own sentAt over the batch's", async () => {
    const result = await accept(
      untimed({ originalTimestamp: '2026-11-23T11:59:00.000Z', sentAt: '2026-11-23T12:00:00.000Z' }),
      { sentAt: '2026-11-23T11:00:00.000Z' },
    )
    expect(result.timestamp).toBe('2026-11-23T11:59:00.000Z')
  })

  it('keeps an explicit timestamp, uses originalTimestamp without sentAt, and receivedAt with neither', async () => {
    const explicit = await accept(untimed({ timestamp: '2026-01-01T00:00:00.000Z', originalTimestamp: '2026-11-23T10:00:00.000Z' }), { sentAt: '2026-11-23T11:00:00.000Z' })
    expect(explicit.timestamp).toBe('2026-01-01T00:00:00.000Z')
    const original = await accept(untimed({ originalTimestamp: '2026-11-23T10:00:00+01:00' }))
    expect(original.timestamp).toBe('2026-11-23T09:00:00.000Z')
    const neither = await accept(untimed({}), { sentAt: '2026-11-23T11:00:00.000Z' })
    expect(neither.timestamp).toBe(receivedAt.toISOString())
    expect(neither.stats?.lastReceivedAt).toBe(receivedAt.toISOString())
  })

  it('records receivedAt on every accepted message', async () => {
    const seen: Array<Record<string, unknown>> = []
    const { buildCollector } = await import('../../../src/collector/create-collector.js')
    const { resolveConfig } = await import('../../../src/collector/config.js')
    const observed = buildCollector(resolveConfig({ sources: [{ writeKey: KEY, name: 'web' }] }), { onAccepted: (b) => seen.push(...b.messages) })
    await observed.fetch(post({ batch: [track(), track({ messageId: 'm-2' })] }))
    expect(seen).toHaveLength(2)
    for (const message of seen) expect(message.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(observed.stats().lastReceivedAt).toBe(seen[0].receivedAt)
  })

  it("reads a date-time without an offset as UTC, whatever the collector's time zone, and a ±hh offset as ±hh:00", async () => {
    const zone = process.env.TZ
    // Node reads TZ again when it is set: Date.parse would read these in Los Angeles time.
    process.env.TZ = 'America/Los_Angeles'
    try {
      // Python's isoformat() of a naive datetime.
      expect((await accept(untimed({ timestamp: '2026-11-25T10:00:00.123456' }))).timestamp).toBe('2026-11-25T10:00:00.123Z')
      expect((await accept(untimed({ originalTimestamp: '2026-11-23T10:00:00' }))).timestamp).toBe('2026-11-23T10:00:00.000Z')
      expect((await accept(untimed({ timestamp: '2026-11-25' }))).timestamp).toBe('2026-11-25T00:00:00.000Z')
      expect((await accept(untimed({ timestamp: '2026-11-25T12:00:00+02' }))).timestamp).toBe('2026-11-25T10:00:00.000Z')
    } finally {
      if (zone === undefined) delete process.env.TZ
      else process.env.TZ = zone
    }
  })

  it('answers 400 naming an unreadable originalTimestamp or sentAt', async () => {
    const bad = await accept(untimed({ originalTimestamp: 'yesterday' }))
    expect(bad).toMatchObject({ status: 400, body: { error: { code: 'VALIDATION', field: 'batch[0].originalTimestamp' } } })
    const badSentAt = await accept(untimed({ originalTimestamp: '2026-11-23T10:00:00.000Z' }), { sentAt: 12 })
    expect(badSentAt).toMatchObject({ status: 400, body: { error: { field: 'sentAt' } } })
  })
})

describe("every client's way in", () => {
  it("answers analytics.js's metrics (POST /v1/m, text/plain, no key) 200, counted, not forwarded", async () => {
    const { collector, calls } = forwardingCollector()
    const request = post('{"series":[{"type":"Counter","metric":"analytics_js.invoke","value":1,"tags":{}}]}', { key: null, path: '/v1/m', headers: { 'content-type': 'text/plain' } })
    expect((await collector.fetch(request)).status).toBe(200)
    await collector.close()
    expect(calls).toHaveLength(0)
    expect(collector.stats()).toMatchObject({ metrics: 1, received: 0, rejected: 0 })
  })

  it('accepts gzipped JSON sent as application/x-www-form-urlencoded (RudderStack Node SDK defaults)', async () => {
    const { collector, calls } = forwardingCollector()
    const body = gzipSync(JSON.stringify({ batch: [track()], sentAt: new Date().toISOString() }))
    const request = new Request('http://collector.test/v1/batch', {
      method: 'POST',
      headers: { authorization: basic(KEY), 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' },
      body,
    })
    expect((await collector.fetch(request)).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
  })

  describe('RudderStack beacon: POST /beacon/v1/batch?writeKey=KEY', () => {
    const beacon = (query: string, headers: Record<string, string> = {}) =>
      new Request(`http://collector.test/beacon/v1/batch${query}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain;charset=UTF-8', ...headers },
        body: JSON.stringify({ batch: [track()], sentAt: new Date().toISOString() }),
      })

    it('accepts the key from the query', async () => {
      const { collector, calls } = forwardingCollector()
      expect((await collector.fetch(beacon(`?writeKey=${KEY}`))).status).toBe(200)
      await until(() => calls.length === 1, 'delivery')
    })

    it.each([
      ['no key', '', {}, /Missing write key/],
      ['an empty key', '?writeKey=', {}, /empty/],
      ['two keys', `?writeKey=${KEY}&writeKey=${KEY}`, {}, /one `writeKey`/],
      ['an unknown key', '?writeKey=nope', {}, /Unknown write key/],
      ['a Basic header naming another key', `?writeKey=${KEY}`, { authorization: basic('other') }, /different write keys/],
    ])('answers 401 to %s', async (_, query, headers, message) => {
      const { collector, calls } = forwardingCollector()
      const response = await collector.fetch(beacon(query, headers))
      expect(response.status).toBe(401)
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message)
      await collector.close()
      expect(calls).toHaveLength(0)
    })
  })
})
