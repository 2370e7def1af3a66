/**
 * Searching the console's record through the admin API: `userId`, `anonymousId` and `outcome`
 * filters (exact match, combined with the others), in the list and in the stream, and records
 * carrying `userId` and `anonymousId` at their top level.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { post, track, until } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

/** "Bad" events fail at once (400); the others are delivered. */
async function searched() {
  const { collector } = consoleCollector({}, (call) => new Response('no', { status: call.json.event === 'Bad' ? 400 : 200 }))
  await collector.fetch(post({
    batch: [
      track({ event: 'Good', userId: 'ada', messageId: 'm-1' }),
      track({ event: 'Bad', userId: 'ada', messageId: 'm-2' }),
      track({ event: 'Good', userId: undefined, anonymousId: 'anon-7', messageId: 'm-3' }),
      { type: 'identify', userId: 'grace', anonymousId: 'anon-7', messageId: 'm-4' },
      track({ event: 'Good', userId: 'adam', messageId: 'm-5' }),
    ],
  }))
  await until(() => collector.stats().pending === 0, 'deliveries settled')
  const ids = async (query: string) => (await json(collector, admin(`/v1/admin/messages${query}`))).body.messages.map((m: any) => m.message.messageId)
  return { collector, ids }
}

describe('searching messages', () => {
  it('GET /v1/admin/messages filters by userId, anonymousId and outcome, exactly, combined with the other filters', async () => {
    const { collector, ids } = await searched()
    expect(await ids('?userId=ada')).toEqual(['m-2', 'm-1'])
    // Exact: neither a prefix nor another case matches.
    expect(await ids('?userId=ad')).toEqual([])
    expect(await ids('?userId=ADA')).toEqual([])
    expect(await ids('?anonymousId=anon-7')).toEqual(['m-4', 'm-3'])
    expect(await ids('?anonymousId=anon-7&type=track')).toEqual(['m-3'])
    expect(await ids('?outcome=failed')).toEqual(['m-2'])
    expect(await ids('?outcome=delivered&userId=ada')).toEqual(['m-1'])
    expect(await ids('?outcome=delivered&event=Good&limit=2')).toEqual(['m-5', 'm-3'])
    expect(await ids('?outcome=retrying')).toEqual([])
    // Empty filters keep everything.
    expect(await ids('?userId=&outcome=')).toHaveLength(5)
    const since = await ids('?since=0&userId=grace')
    expect(since).toEqual(['m-4'])

    const records = (await json(collector, admin('/v1/admin/messages?anonymousId=anon-7'))).body.messages
    expect(records.map((r: any) => [r.userId, r.anonymousId])).toEqual([['grace', 'anon-7'], [undefined, 'anon-7']])
    expect(Object.keys(records[1])).not.toContain('userId')

    for (const path of ['/v1/admin/messages?outcome=lost', '/v1/admin/messages/stream?outcome=Failed']) {
      const refused = await json(collector, admin(path))
      expect(refused).toMatchObject({
        status: 400,
        body: { error: { field: 'outcome', message: expect.stringContaining('Expected `outcome` to be one of queued, retrying, delivered, failed, got "') } },
      })
    }
  })

  it('the stream sends only the changes of records the filters keep', async () => {
    const { collector } = await searched()
    const reader = (await collector.fetch(admin('/v1/admin/messages/stream?since=0&userId=ada&outcome=failed'))).body!.getReader()
    const next = async () => {
      const { value } = await reader.read()
      return JSON.parse(/data: (.+)\n\n$/.exec(new TextDecoder().decode(value))![1]) as { messages: Array<{ userId: string; name: string }> }
    }
    expect((await next()).messages.map((m) => `${m.userId} ${m.name}`)).toEqual(['ada Bad'])
    await collector.fetch(post({ batch: [track({ event: 'Bad', userId: 'bob', messageId: 'm-6' }), track({ event: 'Bad', userId: 'ada', messageId: 'm-7' })] }))
    const seen: string[] = []
    while (!seen.includes('ada Bad')) seen.push(...(await next()).messages.map((m) => `${m.userId} ${m.name}`))
    expect(seen).toEqual(['ada Bad'])
    await reader.cancel()
  })
})
