/**
 * The cap of one replay (`MAX_REPLAY`, 10,000 payloads), on a real Redis: a window holding one
 * payload more than the cap is a 400 naming `to` (narrow it) and sends nothing; a window holding
 * exactly the cap is replayed. The payloads are kept in the server directly (its store, as a
 * collector keeps them: in memory the bound keeps no more than the cap), then replayed by a
 * collector process on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_REPLAY } from '../../../src/collector/replay/replay.js'
import { keptPayload } from '../../../src/collector/replay/kept.js'
import { loadRedis, REDIS_CLIENT_OPTIONS } from '../../../src/collector/state/drivers.js'
import { RedisStore } from '../../../src/collector/state/redis-store.js'
import { startRedis } from '../../helpers/queue-servers.js'
import { admin, onQueueServer, startReceiver, until } from './support.js'

const server = onQueueServer(() => startRedis())
const DAY = 86_400_000

describe('the cap of one replay, on Redis', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => void (receiver = await startReceiver(() => 200)))
  afterAll(() => receiver.close())

  it(`refuses a window of ${MAX_REPLAY + 1} payloads naming \`to\`, and replays one of ${MAX_REPLAY}`, async () => {
    // One delivered payload first, then MAX_REPLAY failed ones, 1 ms apart.
    const first = Date.now() - 60_000
    const payloads = Array.from({ length: MAX_REPLAY + 1 }, (_, i) =>
      keptPayload('web', JSON.stringify({ type: 'track', event: 'Capped', userId: 'u-1', messageId: `cap-${i}`, timestamp: new Date(first + i).toISOString(), version: 1 }), first + i, i > 0))
    const Redis = await loadRedis()
    const store = new RedisStore(new Redis(server.url, REDIS_CLIENT_OPTIONS))
    try {
      await store.keep(payloads, DAY)
    } finally {
      await store.close()
    }
    const c = await server.collector({ WEBHOOK: receiver.url })
    const replay = async (body: object) => {
      const response = await admin(c.url, '/v1/admin/replay', { source: 'web', from: first, to: first + MAX_REPLAY, ...body })
      return { status: response.status, body: (await response.json()) as { replaying?: number; error?: { field: string; message: string } } }
    }

    const over = await replay({ outcome: 'all' })
    expect(over).toMatchObject({ status: 400, body: { error: { field: 'to' } } })
    expect(over.body.error!.message).toBe(`The window holds ${MAX_REPLAY + 1} payloads to replay; at most ${MAX_REPLAY} go in one replay: narrow it.`)
    // The failed ones only: exactly the cap, replayed (the backlog's default room is the cap too).
    expect(await replay({ outcome: 'failed' })).toEqual({ status: 202, body: { success: true, replaying: MAX_REPLAY, unavailable: 0 } })
    await until(() => receiver.attempts.length > 0, 'the replays delivered')
  }, 90_000)
})
