import { describe, expect, it } from 'vitest'
import { HttpError } from '../../src/index.js'
import { collector, createTestClient, HttpResponse, installServer, listen, trackInput, type Received } from '../helpers/client.js'

installServer()

/** A server that refuses, with 413, any body holding a message marked `refuse`. */
const refusesMarked = (req: Received) =>
  req.body.batch.some((m) => m.properties?.refuse === true)
    ? HttpResponse.json({ error: 'too large' }, { status: 413 })
    : HttpResponse.json({ success: true })

describe('413', () => {
  it('bisects a batch of 10 to isolate the refused message; the 9 others are delivered', async () => {
    const wire = collector(refusesMarked)
    const client = createTestClient({ flushAt: 10 })
    const events = listen(client)
    const sent = Array.from({ length: 10 }, (_, i) => client.track(trackInput(i, { properties: { refuse: i === 6 } })))
    expect(await client.flush()).toEqual({ delivered: 9, failed: 1 })

    expect(events.error).toHaveLength(1)
    expect(events.error[0]).toBeInstanceOf(HttpError)
    expect(events.error[0].status).toBe(413)
    expect(events.error[0].messages).toEqual([sent[6]])

    const accepted = wire.requests.filter((r) => !r.body.batch.some((m) => m.messageId === sent[6].messageId))
    const acceptedIds = accepted.flatMap((r) => r.body.batch.map((m) => m.messageId))
    expect(acceptedIds.sort()).toEqual(sent.filter((_, i) => i !== 6).map((m) => m.messageId).sort())
    expect(new Set(acceptedIds).size).toBe(9)
    // Bisection: 10 → 5+5 → 3+2 → 2+1 → 1+1: 9 requests, where one per message would be 11.
    expect(wire.requests.length).toBeLessThanOrEqual(1 + 2 * Math.ceil(Math.log2(10)))
    expect(wire.requests[0].body.batch).toHaveLength(10)
    expect(events.flush.reduce((n, e) => n + e.messages.length, 0)).toBe(9)
    expect(client.stats()).toMatchObject({ delivered: 9, failed: 1, retries: 0 })
  })

  it('the next batch after a split is full size again', async () => {
    const wire = collector(refusesMarked)
    const client = createTestClient({ flushAt: 10 })
    listen(client)
    for (let i = 0; i < 10; i++) client.track(trackInput(i, { properties: { refuse: i === 0 } }))
    await client.flush()
    const before = wire.requests.length
    for (let i = 10; i < 20; i++) client.track(trackInput(i))
    expect(await client.flush()).toEqual({ delivered: 10, failed: 0 })
    expect(wire.requests.slice(before).map((r) => r.body.batch.length)).toEqual([10])
  })

  it('isolates several refused messages', async () => {
    const wire = collector(refusesMarked)
    const client = createTestClient({ flushAt: 10 })
    const events = listen(client)
    const sent = Array.from({ length: 10 }, (_, i) => client.track(trackInput(i, { properties: { refuse: i === 1 || i === 8 } })))
    expect(await client.flush()).toEqual({ delivered: 8, failed: 2 })
    const failed = events.error.flatMap((e) => e.messages)
    expect(failed).toHaveLength(2)
    expect(failed).toEqual(expect.arrayContaining([sent[1], sent[8]]))
    const delivered = wire.requests.filter((r) => !r.body.batch.some((m) => m.properties?.refuse))
    expect(delivered.flatMap((r) => r.body.batch)).toHaveLength(8)
  })

  it('a server that refuses everything with 413 fails each message, in finitely many requests', async () => {
    const wire = collector(() => HttpResponse.json({}, { status: 413 }))
    const client = createTestClient({ flushAt: 4 })
    const events = listen(client)
    for (let i = 0; i < 4; i++) client.track(trackInput(i))
    expect(await client.flush()).toEqual({ delivered: 0, failed: 4 })
    // 4 → 2 + 2 → 1 + 1 + 1 + 1
    expect(wire.requests).toHaveLength(7)
    expect(events.error.flatMap((e) => e.messages)).toHaveLength(4)
    for (const e of events.error) expect(e.messages).toHaveLength(1)
  })

  it('a single message refused with 413 fails at once', async () => {
    const wire = collector(() => HttpResponse.json({}, { status: 413 }))
    const client = createTestClient()
    const events = listen(client)
    const sent = client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 0, failed: 1 })
    expect(wire.requests).toHaveLength(1)
    expect(events.error[0].messages).toEqual([sent])
  })
})
