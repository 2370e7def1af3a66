/**
 * The cap of one replay (`MAX_REPLAY`, 10,000 payloads), on a real Redis: a window holding one
 * payload more than the cap is a 400 naming `to` (narrow it) and sends nothing; a window holding
 * exactly the cap is replayed. A collector process delivers the payloads first (one delivered,
 * the cap's number refused for good), so they are kept where it keeps them: in its completed jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_REPLAY } from '../../../src/collector/replay/replay.js'
import { startRedis } from '../../helpers/queue-servers.js'
import { admin, batchText, onQueueServer, send, startReceiver, until } from './support.js'

const server = onQueueServer(() => startRedis())
/** Payloads per request. */
const CHUNK = 500

describe('the cap of one replay, on Redis', () => {
  let refusing = true
  let receiver: Awaited<ReturnType<typeof startReceiver>>
  beforeAll(async () => void (receiver = await startReceiver((p) => (refusing && p.messageId !== 'm-0' ? 400 : 200))))
  afterAll(() => receiver.close())

  it(`refuses a window of ${MAX_REPLAY + 1} payloads naming \`to\`, and replays one of ${MAX_REPLAY}`, async () => {
    const from = Date.now()
    const c = await server.collector({ WEBHOOK: receiver.url, MAX_PENDING: String(2 * MAX_REPLAY) })
    for (let start = 0; start <= MAX_REPLAY; start += CHUNK) expect(await send(c.url, batchText(start, Math.min(CHUNK, MAX_REPLAY + 1 - start)))).toBe(200)
    await until(async () => {
      const stats = await c.stats()
      return stats.pending === 0 && stats.forwarded === 1 && stats.failed === MAX_REPLAY
    }, `${MAX_REPLAY + 1} deliveries settled`, 90_000)
    const to = Date.now()
    refusing = false
    const replay = async (body: object) => {
      const response = await admin(c.url, '/v1/admin/replay', { source: 'web', from, to, ...body })
      return { status: response.status, body: (await response.json()) as { replaying?: number; error?: { field: string; message: string } } }
    }

    const attempts = receiver.attempts.length
    const over = await replay({ outcome: 'all' })
    expect(over).toMatchObject({ status: 400, body: { error: { field: 'to' } } })
    expect(over.body.error!.message).toBe(`The window holds ${MAX_REPLAY + 1} payloads to replay; at most ${MAX_REPLAY} go in one replay: narrow it.`)
    expect(receiver.attempts).toHaveLength(attempts)
    // The failed ones only: exactly the cap, replayed.
    expect(await replay({ outcome: 'failed' })).toEqual({ status: 202, body: { success: true, replaying: MAX_REPLAY, unavailable: 0 } })
    await until(() => receiver.attempts.length > attempts, 'the replays delivered')
  }, 150_000)
})
