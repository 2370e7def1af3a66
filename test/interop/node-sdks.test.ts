/**
 * The vendors' Node SDKs, from npm, unmodified and each in its own Node 20 process, against a
 * real loopback collector that forwards to a receiver verifying signatures: every message
 * forwarded once, signature valid, properties equal, int64 digits kept, and every member the SDK
 * sent forwarded with them (`_metadata`, `channel`, `sentAt`, …), plus `receivedAt`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { expectCleanExit, run } from '../runtimes/support/runtimes.js'
import { INT64_MAX, startStack, WRITE_KEY, type Stack } from './support/stack.js'

const SCRIPT = 'test/interop/clients/node-sdk.cjs'
const COUNT = 5

let stack: Stack
beforeAll(async () => (stack = await startStack()))
afterAll(() => stack?.close())

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const SDKS = [
  { sdk: '@segment/analytics-node', prefix: 'seg-node', contentType: /^application\/json/, gzip: false, members: { _metadata: { nodeVersion: process.version } } },
  { sdk: 'analytics-node', prefix: 'ajs-node', contentType: /^application\/json/, gzip: false, members: { _metadata: { nodeVersion: process.versions.node } } },
  // Its defaults: gzip on, and axios labels the gzipped JSON application/x-www-form-urlencoded.
  {
    sdk: '@rudderstack/rudder-sdk-node', prefix: 'rs-node', contentType: /^application\/x-www-form-urlencoded/, gzip: true,
    members: { channel: 'server', originalTimestamp: expect.stringMatching(/^\d{4}-/) },
  },
]

describe.each(SDKS)('$sdk', ({ sdk, prefix, contentType, gzip, members }) => {
  it('delivers every message once, signed, whole, with properties and int64 digits intact', async () => {
    const already = stack.forwarded.length
    const firstRequest = stack.requests.length
    const result = await run(process.execPath, ['--harmony-json-parse-with-source', SCRIPT, sdk, stack.url, WRITE_KEY], { timeoutMs: 20_000 })
    expectCleanExit(result, sdk)
    expect(result.stderr).not.toMatch(/sdk error/)
    const forwarded = (await stack.waitForForwarded(already + COUNT + 1)).slice(already)
    const mine = forwarded.filter((f) => String(f.payload.messageId).startsWith(`${prefix}-`))
    expect(mine.map((f) => f.payload.messageId).sort()).toEqual(Array.from({ length: COUNT + 1 }, (_, n) => `${prefix}-${n}`))
    expect(forwarded).toHaveLength(COUNT + 1)
    for (const entry of mine) {
      expect(entry.signatureValid).toBe(true)
      expect(entry.payload).toMatchObject({ ...members, sentAt: expect.stringMatching(/^\d{4}-/), receivedAt: expect.stringMatching(ISO) })
      expect(entry.payload).not.toHaveProperty('writeKey')
    }
    for (const entry of mine.filter((f) => f.payload.type === 'track')) {
      const n = (entry.payload.properties as { n: number }).n
      expect(entry.payload).toMatchObject({ type: 'track', event: 'Interop Event', userId: 'interop-user' })
      expect(entry.payload.properties).toEqual({ n, plan: 'pro', price: 19.99, tweetId: BigInt(INT64_MAX), nested: { list: [1, 'two', null, true], empty: {} } })
      expect(entry.raw).toContain(`"tweetId":${INT64_MAX}`)
    }
    expect(mine.find((f) => f.payload.type === 'identify')?.payload.traits).toEqual({ n: COUNT, plan: 'pro' })
    const requests = stack.requests.slice(firstRequest)
    expect(requests.length).toBeGreaterThan(0)
    for (const request of requests) {
      expect(request).toMatchObject({ method: 'POST', path: '/v1/batch', status: 200 })
      expect(request.contentType).toMatch(contentType)
      expect(request.contentEncoding).toBe(gzip ? 'gzip' : null)
    }
  })
})
