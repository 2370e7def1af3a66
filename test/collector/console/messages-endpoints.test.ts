/**
 * The console's admin endpoints for messages, through `collector.fetch`: the list, changes since a
 * version, filters, retry, the Server-Sent Events stream, and integers beyond 2^53.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { KEY, post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

describe('admin endpoints of the console', () => {
  it('GET /v1/admin/messages/stream: Server-Sent Events of the records that change, filtered; closing the collector ends it', async () => {
    const { collector } = consoleCollector()
    await collector.fetch(post({ batch: [track({ event: 'Before' })] }))
    expect((await collector.fetch(admin('/v1/admin/messages/stream', { token: 'wrong' }))).status).toBe(401)
    const response = await collector.fetch(admin('/v1/admin/messages/stream?since=0&type=track'))
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    // Read directly (a pipe would read ahead): each read is one event.
    const reader = response.body!.getReader()
    const next = async () => {
      const { value } = await reader.read()
      const [, id, data] = /^event: messages\nid: (\d+)\ndata: (.+)\n\n$/.exec(new TextDecoder().decode(value))!
      const answer = JSON.parse(data)
      expect(answer.version).toBe(Number(id))
      return answer as { version: number; messages: Array<{ type: string; name?: string; delivery: { outcome: string } }> }
    }
    const first = await next()
    expect(first.messages.map((m) => m.name)).toEqual(['Before'])
    const seen: string[] = []
    await collector.fetch(post({ batch: [{ type: 'identify', userId: 'u1' }, track({ event: 'After', messageId: 'm-2' })] }))
    while (!seen.includes('After delivered')) {
      const answer = await next()
      expect(answer.messages.length).toBeGreaterThan(0)
      seen.push(...answer.messages.map((m) => `${m.name} ${m.delivery.outcome}`))
    }
    expect(seen.every((m) => !m.startsWith('undefined'))).toBe(true) // The identify is filtered out.

    // A reader that does not keep up gets no backlog: what changed meanwhile comes in one event.
    for (const event of ['One', 'Two', 'Three']) await collector.fetch(post({ batch: [track({ event, messageId: event })] }))
    await until(() => collector.stats().pending === 0, 'deliveries settled')
    const waited = [await next(), await next()]
    expect(waited[0].messages.map((m) => m.name)).toEqual(['One'])
    expect(waited[1].messages.map((m) => `${m.name} ${m.delivery.outcome}`)).toEqual(['Three delivered', 'Two delivered', 'One delivered'])
    await collector.close(0)
    expect(await reader.read()).toEqual({ done: true, value: undefined })
    const late = (await collector.fetch(admin('/v1/admin/messages/stream?since=0'))).body!.getReader()
    expect((await late.read()).done).toBe(false)
    expect(await late.read()).toEqual({ done: true, value: undefined })
  })

  it('GET /v1/admin/messages/stream with a bad limit is refused before it opens (400), never thrown from the stream later', async () => {
    // Found by test/proofs/collector-fuzz.test.ts: the stream read `limit` at each change, in a
    // microtask, where its refusal was an uncaught exception (the end of a Node process).
    const { collector } = consoleCollector()
    const response = await collector.fetch(admin('/v1/admin/messages/stream?since=0&limit=NaN'))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'BAD_REQUEST', message: 'Expected `limit` to be an integer ≥ 0, got "NaN".' } })
    await collector.fetch(post({ batch: [track({ event: 'After' })] }))
    await until(() => collector.stats().pending === 0, 'deliveries settled')
  })

  it('GET /v1/admin/messages: newest first, changes since a version, filters; retry only what failed', async () => {
    const { collector } = consoleCollector({}, (call) => new Response('no', { status: call.json.event === 'Bad' ? 400 : 200 }))
    await collector.fetch(post({ batch: [track({ event: 'Good' }), track({ event: 'Bad', messageId: 'm-2' }), { type: 'identify', userId: 'u1' }] }))
    await until(() => collector.stats().pending === 0, 'deliveries settled')
    const all = await json(collector, admin('/v1/admin/messages'))
    expect(all.body.messages.map((m: any) => [m.type, m.name, m.delivery.outcome])).toEqual([
      ['identify', undefined, 'delivered'], ['track', 'Bad', 'failed'], ['track', 'Good', 'delivered'],
    ])
    expect(all.body.messages[1].delivery.attempts).toEqual([
      { attempt: 1, at: expect.any(String), results: [{ url: 'https://hooks.test/in', status: 400, error: expect.stringContaining('400'), answer: 'no', durationMs: expect.any(Number) }] },
    ])
    // One record alone also gives the payload as forwarded: the exact body its receiver got.
    const one = (await json(collector, admin(`/v1/admin/messages/${all.body.messages[1].id}`))).body
    expect(one.payload).toMatch(/^\{"version":1,"type":"track","messageId":"m-2",.*"event":"Bad"/)
    expect(all.body.messages[1].payload).toBeUndefined()
    expect((await json(collector, admin(`/v1/admin/messages?since=${all.body.version}`))).body.messages).toEqual([])
    expect((await json(collector, admin('/v1/admin/messages?type=track&event=Good'))).body.messages).toHaveLength(1)
    expect((await collector.fetch(admin('/v1/admin/messages?since=x'))).status).toBe(400)

    const good = all.body.messages[2].id
    const bad = all.body.messages[1].id
    expect((await json(collector, admin(`/v1/admin/messages/${good}/retry`, { method: 'POST' }))).status).toBe(409)
    const missing = await collector.fetch(admin('/v1/admin/messages/999/retry', { method: 'POST' }))
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({ error: { message: 'No message "999" is in the console\'s record.' } })
    const retried = await json(collector, admin(`/v1/admin/messages/${bad}/retry`, { method: 'POST' }))
    expect(retried).toMatchObject({ status: 202, body: { message: { id: bad } } })
    await until(() => collector.stats().pending === 0, 'the retry settled')
    const again = await json(collector, admin(`/v1/admin/messages/${bad}`))
    expect(again.body.delivery.attempts.map((a: any) => a.attempt)).toEqual([1, 2])
    expect((await json(collector, admin('/v1/admin/activity'))).body.minutes.reduce((n: number, m: any) => n + m.failed, 0)).toBe(2)
    // One message, failed again: counted once in the stats (the activity chart counts each failure).
    expect(collector.stats()).toMatchObject({ failed: 1, forwarded: 2, pending: 0 })
  })

  it('a retry by hand that delivers takes its message out of `failed`: forwarded + failed stays the messages forwarding', async () => {
    let refuse = true
    const { collector } = consoleCollector({}, () => new Response(refuse ? 'no' : 'ok', { status: refuse ? 400 : 200 }))
    await collector.fetch(post({ batch: [track({ event: 'Late' })] }))
    await until(() => collector.stats().pending === 0, 'the delivery settled')
    expect(collector.stats()).toMatchObject({ failed: 1, forwarded: 0 })
    const [record] = (await json(collector, admin('/v1/admin/messages'))).body.messages
    refuse = false
    expect((await json(collector, admin(`/v1/admin/messages/${record.id}/retry`, { method: 'POST' }))).status).toBe(202)
    await until(() => collector.stats().pending === 0, 'the retry settled')
    expect(collector.stats()).toMatchObject({ received: 1, forwarded: 1, failed: 0, pending: 0 })
    const stats = (await json(collector, admin('/v1/stats'))).body
    expect(stats).toMatchObject({ accepted: 1, forwarded: 1, failed: 0, sources: { web: { forwarded: 1, failed: 0 } } })
  })
})

describe('a delivery to several URLs', () => {
  it('GET /v1/admin/messages: a URL that answers after another accepted the message shows its own status or error, not "still answering"', async () => {
    const held: Array<() => void> = []
    const answer = (status: number) => new Promise<Response>((resolve) => held.push(() => resolve(new Response(status < 300 ? 'ok' : 'no', { status }))))
    const urls = ['https://hooks.test/in', 'https://hooks.test/late-ok', 'https://hooks.test/late-bad']
    const { collector } = consoleCollector(
      { sources: [{ writeKey: KEY, name: 'web', webhooks: { enabled: true, urls: urls.map((url) => ({ url })) } }] },
      (call) => (call.url.endsWith('/in') ? new Response('ok') : answer(call.url.endsWith('-ok') ? 200 : 400)),
    )
    await collector.fetch(post({ batch: [track({ event: 'Fan out' })] }))
    await until(() => collector.stats().pending === 0, 'the delivery settled')
    const results = async () => (await json(collector, admin('/v1/admin/messages'))).body.messages[0].delivery.attempts[0].results
    const still = 'still answering (another URL accepted the message)'
    expect(await results()).toEqual([{ url: urls[0], status: 200, answer: 'ok', durationMs: expect.any(Number) }, { url: urls[1], error: still }, { url: urls[2], error: still }])

    expect(held).toHaveLength(2)
    for (const release of held) release()
    const expected = [{ url: urls[0], status: 200, answer: 'ok' }, { url: urls[1], status: 200, answer: 'ok' }, { url: urls[2], status: 400, answer: 'no', error: expect.stringContaining('answered 400'), durationMs: expect.any(Number) }]
    const deadline = Date.now() + 5_000
    while (JSON.stringify(await results()).includes(still) && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve))
    const [record] = (await json(collector, admin('/v1/admin/messages'))).body.messages
    expect(record.delivery).toMatchObject({ outcome: 'delivered', attempts: [{ attempt: 1, results: expected }] })
    expect(record.delivery.attempts).toHaveLength(1)
    // The late 400 is only shown: the message counts as delivered, and nothing is retried.
    expect(collector.stats()).toMatchObject({ forwarded: 1, failed: 0, retries: 0, pending: 0 })
  })
})

describe('messages with integers beyond 2^53', () => {
  it('are answered digit for digit by the messages endpoints (not a 500)', async () => {
    const { collector } = consoleCollector()
    const response = await collector.fetch(new Request('http://collector.test/v1/track', {
      method: 'POST',
      headers: { authorization: `Basic ${btoa(`${KEY}:`)}`, 'content-type': 'application/json' },
      body: '{"event":"Big","userId":"u","properties":{"id":9223372036854775807}}',
    }))
    expect(response.status).toBe(200)
    const list = await collector.fetch(admin('/v1/admin/messages'))
    expect(list.status).toBe(200)
    const text = await list.text()
    expect(text).toContain('"id":9223372036854775807')
    const id = (JSON.parse(text) as { messages: Array<{ id: string }> }).messages[0].id
    expect(await (await collector.fetch(admin(`/v1/admin/messages/${id}`))).text()).toContain('"id":9223372036854775807')
  })
})
