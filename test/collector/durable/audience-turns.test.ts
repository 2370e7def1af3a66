/**
 * The syncs of one audience take turns across the processes sharing a queue server: a sync reads
 * the membership the one before it left, wherever that one ran. The turn is a key in the server
 * with its owner and a time to live (so a process that died holding it holds it no longer); a sync
 * that waits past its bound is answered 503 `AUDIENCE_BUSY`. Real Redis and PostgreSQL; two
 * collectors in this process stand for two processes (each has its own connections and turns).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, type Collector } from '../../../src/collector/index.js'
import { handleAdmin } from '../../../src/collector/admin/endpoints.js'
import { AdminGuard } from '../../../src/collector/admin/guard.js'
import { createLogger } from '../../../src/logger.js'
import { HttpProblem } from '../../../src/collector/http/errors.js'
import { resolveQueue } from '../../../src/collector/queue-server.js'
import { AudienceBusyError } from '../../../src/collector/index.js'
import { SharedMemberships } from '../../../src/collector/state/shared-memberships.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { QUEUE_SERVERS, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { SECRET, startReceiver, until } from './support.js'

let server: QueueServerProcess | undefined
const opened: Array<{ close(): Promise<unknown> }> = []
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close()
  await server?.stop()
  server = undefined
})

const shared = (url: string) => {
  const state = new SharedState(resolveQueue(url)!)
  opened.push(state)
  return state
}

const collectorOn = (url: string, receiverUrl: string): Collector => {
  const collector = createCollector({
    sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: receiverUrl }], sharedSecret: SECRET } }],
    queue: url,
    onError: () => {},
  })
  opened.push({ close: () => collector.close(0) })
  return collector
}

describe.each(QUEUE_SERVERS)('%s: turns among processes', (_name, start) => {
  it('a second owner waits until the first ends its turn; a turn its owner never ends lasts its time to live; an owner ends only its own', async () => {
    server = await start()
    const [one, two] = [shared(server.url), shared(server.url)]
    const end = await one.turn('k', 60_000, 0)
    expect(end).toBeTypeOf('function')
    // Held: a wait of 100 ms ends without it.
    expect(await two.turn('k', 60_000, 100)).toBeUndefined()
    let taken = false
    const waiting = two.turn('k', 60_000, 10_000).then((got) => ((taken = true), got))
    await one.read() // A round trip to the server: the waiter has tried meanwhile.
    expect(taken).toBe(false)
    await end!()
    expect(await waiting).toBeTypeOf('function')

    // Never ended (its process died): taken over once its 300 ms are over.
    const lapsed = await one.turn('e', 300, 0)
    const before = Date.now()
    const next = await two.turn('e', 60_000, 10_000)
    expect(next).toBeTypeOf('function')
    expect(Date.now() - before).toBeGreaterThanOrEqual(200)
    // The first owner's late end does not end the second's turn.
    await lapsed!()
    expect(await shared(server.url).turn('e', 60_000, 100)).toBeUndefined()
  }, 30_000)

  it('two syncs of one audience sent at once to two processes take turns: the second diffs against the first', async () => {
    server = await start()
    const receiver = await startReceiver(() => 200)
    try {
      const [a, b] = [collectorOn(server.url, receiver.url), collectorOn(server.url, receiver.url)]
      // Which one reads first is not fixed; either way the other diffs against it (both at
      // once, each would diff against nothing: u1 twice, no removal).
      const dispatches = await Promise.all([
        a.syncAudience({ source: 'web', audience: 'Gold', members: ['u1', 'u2'] }),
        b.syncAudience({ source: 'web', audience: 'Gold', members: ['u1', 'u3'] }),
      ])
      await Promise.all(dispatches.map((d) => d.queued))
      const sent = () => receiver.accepted.map((r) => {
        const payload = JSON.parse(r.raw) as { userId: string; traits: Record<string, boolean> }
        return `${payload.userId}=${payload.traits.gold}`
      })
      await until(() => sent().length === 4, 'both syncs', 15_000)
      expect([
        ['u1=true', 'u2=false', 'u2=true', 'u3=true'],
        ['u1=true', 'u2=true', 'u3=false', 'u3=true'],
      ]).toContainEqual(sent().sort())
    } finally {
      await receiver.close()
    }
  }, 30_000)

  it("a sync waiting past its bound for another process's is refused, naming the audience; answered 503 AUDIENCE_BUSY over HTTP", async () => {
    server = await start()
    // Another process's sync of web/Gold under way (the key `SharedMemberships` takes).
    const holder = await shared(server.url).turn(`audience:${JSON.stringify(['web', 'Gold'])}`, 60_000, 0)
    expect(holder).toBeTypeOf('function')
    const memberships = new SharedMemberships(shared(server.url), 200)
    const refused = await memberships.turn('web', 'Gold').then(() => undefined, (error: unknown) => error)
    expect(refused).toBeInstanceOf(AudienceBusyError)
    expect(refused).toMatchObject({ name: 'AudienceBusyError', code: 'AUDIENCE_BUSY' })
    expect((refused as Error).message).toBe('Source "web": audience "Gold" is being synced by another collector process, still after 0.2 s.')
    // Another audience is not held up.
    await (await memberships.turn('web', 'Silver'))()
    const problem = await handleAdmin('audiences', new Request('http://collector/v1/audiences', {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token-for-tests', 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'web', audience: 'Gold', members: ['u1'] }),
    }), {
      guard: new AdminGuard({ token: 'admin-token-for-tests', trustProxy: false, log: createLogger('analytics:collector', false) }),
      durable: true,
      deletion: () => { throw new Error('not called') },
      audience: () => memberships.turn('web', 'Gold').then(() => { throw new Error('not refused') }),
      stats: () => Promise.reject(new Error('not called')),
    }).then(() => undefined, (error: unknown) => error)
    expect(problem).toBeInstanceOf(HttpProblem)
    const answer = (problem as HttpProblem).toAnswer().toResponse()
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('5')
    expect(await answer.json()).toMatchObject({ success: false, error: { code: 'AUDIENCE_BUSY', message: expect.stringContaining('audience "Gold" is being synced by another collector process') } })
    await holder!()
  }, 30_000)
})
