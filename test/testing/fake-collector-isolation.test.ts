/**
 * The fake collector as tests lean on it: scripted answers of any status (204 has no body),
 * scripted headers that replace the defaults, reset() isolating tests from a request still in
 * flight, and `messages` without a retry's repeat (as the collector forwards them).
 */
import { describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { createFakeCollector } from '../../src/testing/index.js'
import { installMswServer } from './support.js'

const server = installMswServer()

function install() {
  const fake = createFakeCollector()
  server.use(...fake.handlers)
  return fake
}

describe('createFakeCollector', () => {
  it('answers a scripted 204 (no body) as 204, and a scripted Content-Type replaces the default', async () => {
    const fake = install()
    fake.reply({ status: 204 }, { status: 400, headers: { 'Content-Type': 'text/html' }, body: '<h1>bad</h1>' })
    const post = () => fetch('https://api.segment.io/v1/batch', { method: 'POST', headers: { authorization: `Basic ${btoa('k:')}` }, body: '{"batch":[]}' })
    const noContent = await post()
    expect([noContent.status, await noContent.text()]).toEqual([204, ''])
    const refused = await post()
    expect([refused.status, refused.headers.get('content-type'), await refused.text()]).toEqual([400, 'text/html', '<h1>bad</h1>'])
    expect(fake.requests.map((r) => r.status)).toEqual([204, 400])
  })

  it('reset() leaves nothing of a request still in flight to the next test', async () => {
    vi.useFakeTimers()
    const fake = install()
    fake.reply({ delayMs: 200 })
    const client = new Client('k', { flushAt: 1 })
    client.track({ userId: 'u', event: 'From the first test' })
    const flushed = client.flush()
    await vi.advanceTimersByTimeAsync(50)
    fake.reset()
    await vi.advanceTimersByTimeAsync(200)
    expect(await flushed).toEqual({ delivered: 1, failed: 0 })
    expect([fake.requests, fake.batches, fake.messages]).toEqual([[], [], []])
    await client.close()
  })

  it("keeps a client's retry of an accepted message out of `messages`, as the collector does", async () => {
    vi.useFakeTimers()
    const fake = install()
    // The first answer comes after the client gave up on it (timeout 100): the retry repeats the batch.
    fake.reply({ delayMs: 300 })
    const client = new Client('k', { flushAt: 1, timeout: 100, minRetryDelay: 10, maxRetryDelay: 10 })
    const sent = client.track({ userId: 'u', event: 'Retried' })
    const flushed = client.flush()
    await vi.advanceTimersByTimeAsync(1_000)
    expect(await flushed).toEqual({ delivered: 1, failed: 0 })
    expect(fake.requests).toHaveLength(2)
    expect(fake.messages.map((m) => m.messageId)).toEqual([sent.messageId])
    await client.close()
  })
})
