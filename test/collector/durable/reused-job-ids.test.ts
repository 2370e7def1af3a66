/**
 * De-duplication across a queue whose job ids started again (BullMQ's ids restart once a queue is
 * emptied or its data is removed): a messageId claimed less than 24 hours ago by an earlier job
 * that had the same id is still a duplicate. The claim's owner is the job's id *and* when it was
 * added, as its settled marks are, so the new job does not take the old claim for its own.
 * Real Redis and PostgreSQL; the collector in this process.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, type Collector } from '../../../src/collector/index.js'
import { DEDUP_TTL_MS } from '../../../src/collector/ingest/dedup.js'
import { resolveQueue } from '../../../src/collector/queue-server.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { QUEUE_SERVERS, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { batchText, SECRET, startReceiver, until } from './support.js'

let server: QueueServerProcess | undefined
let collector: Collector | undefined
afterEach(async () => {
  await collector?.close(0)
  collector = undefined
  await server?.stop()
  server = undefined
})

describe.each(QUEUE_SERVERS)('%s: job ids that started again', (_name, start) => {
  it('a messageId an earlier job "1" claimed is a duplicate for the new job "1" (the other messages are delivered)', async () => {
    server = await start()
    // What the first job of an emptied queue left: its claim of m-1, owned by "1" (its id alone,
    // as the claims' owner was written until 2026-11-27).
    const earlier = new SharedState(resolveQueue(server.url)!)
    expect((await earlier.claim('web', ['m-1'], '1', DEDUP_TTL_MS)).size).toBe(1)
    await earlier.close()
    const receiver = await startReceiver(() => 200)
    try {
      collector = createCollector({
        sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: receiver.url }], sharedSecret: SECRET } }],
        queue: server.url,
        adminToken: 'admin-token-for-tests',
        onError: () => {},
      })
      // The queue's first job: id "1" again. Its m-1 was claimed 24 h or less ago: a duplicate.
      const response = await collector.fetch(new Request('http://collector/v1/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
        body: batchText(1, 3),
      }))
      expect(response.status).toBe(200)
      const web = async () => ((await (await collector!.fetch(new Request('http://collector/v1/stats', { headers: { authorization: 'Bearer admin-token-for-tests' } }))).json()) as { sources: Record<string, Record<string, number>> }).sources.web
      // All three settled, one way or the other.
      await until(async () => {
        const { forwarded = 0, deduplicated = 0 } = (await web()) ?? {}
        return forwarded + deduplicated >= 3
      }, 'the three messages settled', 15_000)
      expect(receiver.accepted.map((r) => r.messageId).sort()).toEqual(['m-2', 'm-3'])
      expect((await web())?.deduplicated).toBe(1)
    } finally {
      await receiver.close()
    }
  }, 30_000)
})
