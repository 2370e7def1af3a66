/**
 * Deletion requests and audience syncs in the console's record (memory mode): their payloads are
 * listed like messages (type `delete`; the audience's identifies marked `origin: "audience"` and
 * named after it), with their attempts and outcome, in the list, its filters and the stream; a
 * failed one is retried by hand. A large audience records only its first payloads.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

const settled = (collector: { stats(): { pending: number } }) => until(() => collector.stats().pending === 0, 'deliveries settled')

describe('admin payloads in the console', () => {
  it('a deletion request is listed with its attempts and outcome, filtered by type and origin; a failed one is retried by hand', async () => {
    let refuse = true
    const { collector } = consoleCollector({}, (call) => new Response('', { status: call.json.type === 'delete' && refuse ? 400 : 200 }))
    await collector.fetch(post({ batch: [track({ event: 'Before' })] }))
    expect((await json(collector, admin('/v1/deletions', { method: 'POST', body: { userId: 'ada' } }))).body).toMatchObject({ sent: 1 })
    await settled(collector)

    const all = (await json(collector, admin('/v1/admin/messages'))).body.messages
    expect(all.map((m: any) => [m.type, m.origin, m.name, m.delivery.outcome])).toEqual([
      ['delete', 'deletion', undefined, 'failed'],
      ['track', undefined, 'Before', 'delivered'],
    ])
    const [deletion] = all
    expect(deletion).toMatchObject({ source: 'web', userId: 'ada', message: { type: 'delete', userId: 'ada' } })
    expect(deletion.delivery.attempts).toEqual([{ attempt: 1, at: expect.any(String), results: [{ url: 'https://hooks.test/in', status: 400, error: expect.stringContaining('400'), durationMs: expect.any(Number) }] }])
    for (const filter of ['type=delete', 'origin=deletion']) {
      expect((await json(collector, admin(`/v1/admin/messages?${filter}`))).body.messages.map((m: any) => m.id)).toEqual([deletion.id])
    }
    expect((await json(collector, admin('/v1/admin/messages?origin=audience'))).body.messages).toEqual([])

    refuse = false
    expect((await json(collector, admin(`/v1/admin/messages/${deletion.id}/retry`, { method: 'POST' }))).status).toBe(202)
    await settled(collector)
    const again = (await json(collector, admin(`/v1/admin/messages/${deletion.id}`))).body
    expect(again.delivery.outcome).toBe('delivered')
    expect(again.delivery.attempts.map((a: any) => [a.attempt, a.results[0].status])).toEqual([[1, 400], [2, 200]])
    expect(collector.stats()).toMatchObject({ forwarded: 2, failed: 0 })
  })

  it('collector.requestDeletion is recorded too, and shows in the event stream', async () => {
    const { collector } = consoleCollector()
    const stream = (await collector.fetch(admin('/v1/admin/messages/stream?since=0&type=delete'))).body!.getReader()
    const dispatch = collector.requestDeletion({ userId: 'bob' })
    expect(await dispatch.settled).toEqual({ delivered: 1, failed: 0 })
    const outcomes: string[] = []
    while (!outcomes.includes('delivered')) {
      const text = new TextDecoder().decode((await stream.read()).value)
      const answer = JSON.parse(/\ndata: (.+)\n/.exec(text)![1])
      outcomes.push(...answer.messages.map((m: any) => m.delivery.outcome))
      expect(answer.messages.every((m: any) => m.type === 'delete' && m.userId === 'bob')).toBe(true)
    }
    await stream.cancel()
  })

  it("an audience sync's identifies are named after the audience and marked as such; a large one records its first 100, and messages stay", async () => {
    const { collector, calls } = consoleCollector()
    await collector.fetch(post({ batch: [track({ event: 'Kept' })] }))
    await json(collector, admin('/v1/audiences', { method: 'POST', body: { source: 'web', audience: 'Power Users', members: ['ada', 'bob'] } }))
    await settled(collector)
    const synced = (await json(collector, admin('/v1/admin/messages?origin=audience'))).body.messages
    expect(synced.map((m: any) => [m.type, m.name, m.userId, m.message.traits, m.delivery.outcome])).toEqual([
      ['identify', 'Power Users', 'bob', { power_users: true }, 'delivered'],
      ['identify', 'Power Users', 'ada', { power_users: true }, 'delivered'],
    ])
    expect((await json(collector, admin('/v1/admin/messages?event=Power%20Users'))).body.messages).toHaveLength(2)

    const members = Array.from({ length: 250 }, (_, i) => `member-${i}`)
    const answer = await json(collector, admin('/v1/audiences', { method: 'POST', body: { source: 'web', audience: 'Big', members } }))
    expect(answer.body).toMatchObject({ sent: 250 })
    await settled(collector)
    expect(calls.filter((c) => c.json.traits && 'big' in (c.json.traits as object))).toHaveLength(250)
    const big = (await json(collector, admin('/v1/admin/messages?event=Big&limit=500'))).body.messages
    expect(big).toHaveLength(100)
    expect(big.at(-1).userId).toBe('member-0')
    expect(big.every((m: any) => m.origin === 'audience' && m.delivery.outcome === 'delivered')).toBe(true)
    expect((await json(collector, admin('/v1/admin/messages?event=Kept'))).body.messages).toHaveLength(1)
  })
})
