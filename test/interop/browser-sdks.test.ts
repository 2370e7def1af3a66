/**
 * The vendors' browser SDKs, from npm, bundled as their users bundle them, in real Chromium
 * (Debian's, one instance for the file), against a real loopback collector on another origin
 * that forwards to a receiver verifying signatures: every message forwarded once, signature
 * valid, properties equal; int64 digits kept where the SDK can send them.
 */
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { launchChromium, startPageServer, type Chromium, type PageServer } from '../runtimes/support/browser.js'
import { until } from '../helpers/until.js'
import { sdkPages } from './support/pages.js'
import { INT64_MAX, startStack, WRITE_KEY, type Forwarded, type Stack } from './support/stack.js'

const COUNT = 4

let stack: Stack
let pages: PageServer
let chromium: Chromium
beforeAll(async () => {
  ;[stack, pages, chromium] = await Promise.all([startStack(), sdkPages().then(startPageServer), launchChromium()])
}, 60_000)
afterAll(async () => {
  await chromium?.close()
  await pages?.close()
  await stack?.close()
})

async function openPage(name: string): Promise<Page> {
  const page = await chromium.context.newPage()
  page.on('pageerror', (error) => console.error(`${name} page error:`, error))
  await page.goto(`${pages.url}/${name}.html`)
  await page.waitForFunction(() => document.title === 'ready')
  // How a JS app sends an int64: a bigint whose toJSON returns its digits as raw JSON.
  await page.evaluate(() => {
    ;(BigInt.prototype as unknown as { toJSON(): unknown }).toJSON = function (this: bigint) {
      return (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(this.toString())
    }
  })
  return page
}

/** The payloads of one run (tagged by `run` in properties/traits), checked for signature and duplicates. */
function ofRun(forwarded: Forwarded[], run: string): Forwarded[] {
  const mine = forwarded.filter((f) => ((f.payload.properties ?? f.payload.traits) as { run?: string } | undefined)?.run === run)
  for (const entry of mine) expect(entry.signatureValid).toBe(true)
  const ids = mine.map((f) => f.payload.messageId)
  expect(new Set(ids).size).toBe(ids.length)
  return mine
}

/** Waits until the run's messages have all been forwarded and nothing is pending. */
async function waitForRun(run: string): Promise<void> {
  await until(() => ofRun(stack.forwarded, run).length >= COUNT + 1, `the ${COUNT + 1} messages of run ${run} to be forwarded`, 15_000)
  await stack.waitForForwarded(0)
}

const expectedProperties = (run: string, n: number, int64: boolean) => ({
  run, n, plan: 'pro', price: 19.99, nested: { list: [1, 'two', true] }, ...(int64 && { tweetId: BigInt(INT64_MAX) }),
})

describe('@segment/analytics-next (analytics.js) in Chromium', () => {
  async function send(run: string, batching: boolean, failures: number) {
    const page = await openPage('segment')
    const firstRequest = stack.requests.length
    stack.fail(failures)
    await page.evaluate(
      async ({ writeKey, host, run, batching, count }) => {
        const { SegmentAnalyticsBrowser } = window as unknown as { SegmentAnalyticsBrowser: { load(...args: unknown[]): Promise<[{ track: Function; identify: Function }]> } }
        const [analytics] = await SegmentAnalyticsBrowser.load(
          {
            writeKey,
            cdnSettings: {
              integrations: { 'Segment.io': { apiKey: writeKey, ...(batching && { deliveryStrategy: { strategy: 'batching', config: { size: 3, timeout: 200 } } }) } },
              metrics: { flushTimer: 100, sampleRate: 1 },
            },
          },
          { integrations: { 'Segment.io': { apiHost: `${host}/v1`, protocol: 'http', httpConfig: { backoffConfig: { baseBackoffInterval: 0.1, maxBackoffInterval: 0.2 } } } } },
        )
        for (let n = 0; n < count; n++) {
          void analytics.track('Interop Event', { run, n, plan: 'pro', price: 19.99, nested: { list: [1, 'two', true] }, tweetId: BigInt('9223372036854775807') })
        }
        void analytics.identify('interop-user', { run, n: count, plan: 'pro' })
      },
      { writeKey: WRITE_KEY, host: new URL(stack.url).host, run, batching, count: COUNT },
    )
    await waitForRun(run)
    // Metrics are posted on a 100 ms timer once the SDK has counted something.
    const startedMetrics = Date.now()
    while (!stack.requests.slice(firstRequest).some((r) => r.path === '/v1/m') && Date.now() - startedMetrics < 5_000) await new Promise((r) => setTimeout(r, 50))
    await page.close()
    return { mine: ofRun(stack.forwarded, run), requests: stack.requests.slice(firstRequest) }
  }

  function expectDelivered(mine: Forwarded[], run: string) {
    expect(mine).toHaveLength(COUNT + 1)
    // The whole message, but the writeKey analytics.js puts in every one.
    for (const { payload } of mine) {
      expect(payload).toMatchObject({ _metadata: expect.any(Object), integrations: expect.any(Object), sentAt: expect.stringMatching(/^\d{4}-/), receivedAt: expect.stringMatching(/^\d{4}-/) })
      expect(payload).not.toHaveProperty('writeKey')
    }
    for (let n = 0; n < COUNT; n++) {
      const entry = mine.find((f) => f.payload.type === 'track' && (f.payload.properties as { n: number }).n === n)
      expect(entry?.payload).toMatchObject({ event: 'Interop Event', properties: expectedProperties(run, n, true) })
      expect(entry?.raw).toContain(`"tweetId":${INT64_MAX}`)
    }
    expect(mine.find((f) => f.payload.type === 'identify')?.payload).toMatchObject({ userId: 'interop-user', traits: { run, n: COUNT, plan: 'pro' } })
  }

  it('default mode: one call per request on the short paths (/v1/t, /v1/i), 503s retried, /v1/m answered', async () => {
    const { mine, requests } = await send('next-default', false, 2)
    expectDelivered(mine, 'next-default')
    const posts = requests.filter((r) => r.method === 'POST')
    expect(posts.filter((r) => r.status === 503)).toHaveLength(2)
    expect(new Set(posts.filter((r) => r.path !== '/v1/m').map((r) => r.path))).toEqual(new Set(['/v1/t', '/v1/i']))
    expect(posts.filter((r) => r.path === '/v1/m').length).toBeGreaterThan(0)
    expect(posts.every((r) => r.status === 200 || r.status === 503)).toBe(true)
    expect(stack.collector.stats().metrics).toBeGreaterThan(0)
  })

  it('batching mode: batches on /v1/b, 503s retried', async () => {
    const { mine, requests } = await send('next-batching', true, 1)
    expectDelivered(mine, 'next-batching')
    const posts = requests.filter((r) => r.method === 'POST' && r.path !== '/v1/m')
    expect(posts.filter((r) => r.status === 503)).toHaveLength(1)
    expect(new Set(posts.map((r) => r.path))).toEqual(new Set(['/v1/b']))
  })
})

describe('@rudderstack/analytics-js in Chromium', () => {
  async function send(run: string, mode: 'xhr' | 'batching' | 'beacon', failures: number) {
    const page = await openPage('rudder')
    const firstRequest = stack.requests.length
    stack.fail(failures)
    await page.evaluate(
      ({ writeKey, dataPlaneUrl, run, mode, count }) =>
        new Promise<void>((resolve) => {
          const { RudderAnalytics } = window as unknown as { RudderAnalytics: new () => { load: Function; track: Function; identify: Function } }
          const analytics = new RudderAnalytics()
          analytics.load(writeKey, dataPlaneUrl, {
            // The source's settings, given inline instead of fetched from RudderStack's control plane.
            getSourceConfig: () => ({ source: { id: 'interop', name: 'interop', enabled: true, workspaceId: 'interop', config: {}, destinations: [] } }),
            logLevel: 'ERROR',
            plugins: [mode === 'beacon' ? 'BeaconQueue' : 'XhrQueue'],
            useBeacon: mode === 'beacon',
            beaconQueueOptions: { maxItems: 3, flushQueueInterval: 200 },
            queueOptions: { minRetryDelay: 100, maxRetryDelay: 200, ...(mode === 'batching' && { batch: { enabled: true, maxItems: 3, flushInterval: 200 } }) },
            onLoaded: () => {
              // The SDK's own sanitiser turns a bigint into "[BigInt]" and copies a JSON.rawJSON
              // value into a plain object, so no int64 can be sent through it (see README).
              for (let n = 0; n < count; n++) {
                analytics.track('Interop Event', { run, n, plan: 'pro', price: 19.99, nested: { list: [1, 'two', true] } })
              }
              analytics.identify('interop-user', { run, n: count, plan: 'pro' })
              resolve()
            },
          })
        }),
      { writeKey: WRITE_KEY, dataPlaneUrl: stack.url, run, mode, count: COUNT },
    )
    await waitForRun(run)
    await page.close()
    return { mine: ofRun(stack.forwarded, run), requests: stack.requests.slice(firstRequest) }
  }

  it.each([
    ['xhr', ['/v1/track', '/v1/identify'], 1, /^application\/json/],
    ['batching', ['/v1/batch'], 1, /^application\/json/],
    ['beacon', ['/beacon/v1/batch'], 0, /^text\/plain/],
  ] as const)('%s mode', async (mode, paths, failures, contentType) => {
    const run = `rudder-${mode}`
    const { mine, requests } = await send(run, mode, failures)
    expect(mine).toHaveLength(COUNT + 1)
    // The whole message: the SDK's `channel`, its own times, and the collector's `receivedAt`.
    for (const { payload } of mine) {
      expect(payload).toMatchObject({ channel: 'web', originalTimestamp: expect.stringMatching(/^\d{4}-/), sentAt: expect.stringMatching(/^\d{4}-/), receivedAt: expect.stringMatching(/^\d{4}-/) })
      expect(payload).not.toHaveProperty('writeKey')
    }
    for (let n = 0; n < COUNT; n++) {
      const entry = mine.find((f) => f.payload.type === 'track' && (f.payload.properties as { n: number }).n === n)
      expect(entry?.payload).toMatchObject({ event: 'Interop Event', properties: expectedProperties(run, n, false) })
    }
    expect(mine.find((f) => f.payload.type === 'identify')?.payload).toMatchObject({ userId: 'interop-user', traits: { run, n: COUNT, plan: 'pro' } })
    const posts = requests.filter((r) => r.method === 'POST')
    expect(new Set(posts.map((r) => r.path))).toEqual(new Set(paths))
    expect(posts.filter((r) => r.status === 503)).toHaveLength(failures)
    for (const post of posts) expect(post.contentType).toMatch(contentType)
  }, 30_000)
})
