/**
 * What a receiver got, in real Chromium against a collector in memory mode with two URLs: URL 1
 * answers 500, URL 2 accepts. The attempt says in words that URL 2 accepted the message and that
 * URL 1's 500 is not retried (the first URL to accept a message ends its delivery); its table
 * shows each receiver's status, duration and the first KB of its answer; the payload shown is the
 * exact body the receivers got (not the accepted message), as `GET /v1/admin/messages/{id}` gives it.
 */
import { expect, it } from 'vitest'
import { nodeFetch } from '../../src/collector/index.js'
import { startServer as startReceiver, type TestServer } from '../webhooks/servers.js'
import { consoleUnderTest, eventually, expectAcceptedByUrl2 } from './support.js'

const TOKEN = 'attempts-admin-token-0123456789'
let refusing: TestServer
let accepting: TestServer
const urls: Array<{ url: string }> = []

const under = consoleUnderTest({
  // The URLs are filled in before the collector starts (beforeAll of `consoleUnderTest` runs after these lines).
  sources: [{ writeKey: 'attempts-key', name: 'web', webhooks: { urls, sharedSecret: 'attempts-secret' } }],
  adminToken: TOKEN,
  fetch: nodeFetch,
  allowPrivateWebhookUrls: true,
}, async () => {
  refusing = await startReceiver({ status: 500, body: '{"message":"database down"}' })
  // Answers once URL 1 has its request: the 500 and the 200 come close together, in either order.
  accepting = await startReceiver({ status: 200, body: `thanks ${'x'.repeat(2_000)}`, waitFor: () => refusing.received(1) })
  urls.push({ url: refusing.url }, { url: accepting.url })
  return async () => {
    await refusing.close()
    await accepting.close()
  }
})

it('shows each URL\'s outcome in words, its status, answer and duration, and the payload as forwarded', async () => {
  const page = await under.signedIn()
  const body = '{"batch":[{"type":"track","event":"Paid","userId":"ada","messageId":"paid-1","properties":{"total":12.50}}]}'
  const sent = await fetch(`${under.server.url}/v1/batch`, { method: 'POST', headers: { authorization: `Basic ${btoa('attempts-key:')}`, 'content-type': 'application/json' }, body })
  expect(sent.status).toBe(200)
  await expectAcceptedByUrl2(page, 'track Paid')
  const rows = page.getByRole('table', { name: 'Deliveries of track Paid' }).getByRole('row')
  await eventually(() => rows.count()).toBe(3)
  const cells = async (n: number) => rows.nth(n).getByRole('cell').allTextContents()
  const [first, second] = [await cells(1), await cells(2)]
  expect(first.slice(2, 5)).toEqual(['URL 1', refusing.url, expect.stringMatching(/^500: .*answered 500/)])
  expect(first[5]).toMatch(/^\d+ ms$/)
  expect(first[6]).toBe('{"message":"database down"}')
  expect(second.slice(2, 5)).toEqual(['URL 2', accepting.url, '200'])
  expect(second[5]).toMatch(/^\d+ ms$/)
  // The first KB of the answer, not all 2,007 bytes.
  expect(second[6]).toBe(`thanks ${'x'.repeat(1_024 - 7)}`)
  // The payload as the receivers got it, byte for byte (the webhook payload, `version` 1), not the accepted message.
  const payload = page.getByLabel('Payload as forwarded of track Paid')
  await eventually(() => payload.textContent()).toBe(accepting.requests[0].raw.toString())
  expect(refusing.requests[0].raw.toString()).toBe(accepting.requests[0].raw.toString())
  expect(await payload.textContent()).toMatch(/^\{"version":1,"type":"track","messageId":"paid-1"/)
  expect(await page.getByLabel('Raw JSON of track Paid').textContent()).not.toContain('"version"')
  expect(under.pageErrors).toEqual([])
  await page.close()
})

it('draws the chart across its whole box, over a time axis', async () => {
  const page = await under.signedIn()
  const chart = page.getByRole('img', { name: 'Deliveries per minute, last hour' })
  await eventually(() => page.getByLabel('Time axis').locator('span').count()).toBe(5)
  const labels = await page.getByLabel('Time axis').locator('span').allTextContents()
  for (const label of labels) expect(label).toMatch(/^\d{1,2}:\d{2}/)
  // The bars span the box: the first starts at its left edge, the last ends at its right edge.
  const box = (await chart.boundingBox())!
  const bars = await chart.locator('rect').evaluateAll((rects) => rects.map((r) => r.getBoundingClientRect()).map((r) => [r.left, r.right]))
  expect(bars[0][0] - box.x).toBeLessThan(box.width * 0.01)
  expect(box.x + box.width - bars.at(-1)![1]).toBeLessThan(box.width * 0.01)
  expect(box.width).toBeGreaterThan(700)
  await page.close()
})
