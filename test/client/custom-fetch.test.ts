/**
 * A `fetch` option that resolves with something that is not a Response (`undefined`, the parsed
 * body of the real answer, a hand-made object) is reported through `'error'` for what it is: the
 * kind of value it gave, never its content. It was an internal "Cannot destructure property
 * 'status' of …" (or, for an object without `headers`, "Cannot read properties of undefined").
 */
import { describe, expect, it, vi } from 'vitest'
import { isNetworkError } from '../../src/index.js'
import { WebhookDestination } from '../../src/webhooks/index.js'
import { BATCH_URL, collector, createTestClient, HttpResponse, installServer, listen, trackInput } from '../helpers/client.js'

installServer()

const SECRET = 'BODY-SECRET-7d1f'

describe('a fetch option that does not resolve with a Response', () => {
  it('one that returns the parsed body of the real answer: reported as such, without the body', async () => {
    const wire = collector(() => HttpResponse.json({ success: true, token: SECRET }))
    const client = createTestClient({ fetch: (async (url: string, init?: RequestInit) => (await fetch(url, init)).json()) as never, maxRetries: 0 })
    const events = listen(client)
    client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(1)
    expect(events.error).toHaveLength(1)
    const [error] = events.error
    expect(isNetworkError(error)).toBe(true)
    expect(error.message).toBe(`Request to ${BATCH_URL} failed: Expected \`fetch\` to resolve with a Response, got an object.`)
    expect(error.messages).toHaveLength(1)
  })

  it.each([
    ['undefined', undefined, '`undefined`'],
    ['null', null, '`null`'],
    ['a string', `ok ${SECRET}`, 'a string'],
    ['a number', 200, 'a number'],
    ['an object without `status`', { ok: true, headers: new Headers() }, 'an object'],
    ['an object without `headers`', { status: 200, body: SECRET }, 'an object'],
    ['a Map', new Map([['status', 200]]), 'a Map'],
  ])('one that resolves with %s: the kind of value is named, never its content', async (_label, value, kind) => {
    const client = createTestClient({ fetch: (async () => value) as never, maxRetries: 0 })
    const events = listen(client)
    client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 0, failed: 1 })
    expect(events.error.map((e) => e.message)).toEqual([`Request to ${BATCH_URL} failed: Expected \`fetch\` to resolve with a Response, got ${kind}.`])
    expect(events.error[0].message).not.toContain(SECRET)
  })

  it('is retried like a request that got no answer (a wrapper that resolves undefined on failure)', async () => {
    vi.useFakeTimers()
    const wire = collector()
    let calls = 0
    const client = createTestClient({ fetch: (async (url: string, init?: RequestInit) => (++calls === 1 ? undefined : fetch(url, init))) as never })
    const events = listen(client)
    const sent = client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await result).toEqual({ delivered: 1, failed: 0 })
    expect(events.retry.map((r) => r.error.message)).toEqual([`Request to ${BATCH_URL} failed: Expected \`fetch\` to resolve with a Response, got \`undefined\`.`])
    expect(wire.messages()).toEqual([sent])
  })

  it("WebhookDestination's fetch option is named the same way", async () => {
    const destination = new WebhookDestination({ urls: [{ url: 'https://hooks.test/a' }], retryWindow: 0, fetch: (async () => undefined) as never })
    const result = await destination.deliver({ type: 'track', event: 'e', userId: 'u' })
    expect(result.delivered).toBe(false)
    expect(result.error?.message).toContain('Expected `fetch` to resolve with a Response, got `undefined`.')
    await destination.close()
  })
})
