/**
 * A durable queue closed while it is still opening its queue server (the server reachable): once
 * `close()` has resolved, nothing of it keeps running. The shared counters' refresh (every 250 ms)
 * must not start after the drain has stopped it: it would go on reading for as long as the process
 * lives. `close()` is called from inside the opening's first read of the counters, the last step
 * before the refresh starts. Real Redis and PostgreSQL.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { BullmqQueue } from '../../../src/collector/delivery/bullmq-queue.js'
import { resolveQueue } from '../../../src/collector/queue-server.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { Tally } from '../../../src/collector/stats.js'
import { createLogger } from '../../../src/logger.js'
import { QUEUE_SERVERS, type QueueServerProcess } from '../../helpers/queue-servers.js'

let server: QueueServerProcess | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await server?.stop()
  server = undefined
})

describe.each(QUEUE_SERVERS)('%s: close() while the queue server is being opened', (_name, start) => {
  it('leaves no refresh of the shared counters running once it has resolved', async () => {
    server = await start()
    // Intervals of 250 ms made and not cleared: the refresh's, if one was left running.
    const live = new Set<unknown>()
    const { setInterval, clearInterval } = globalThis
    vi.spyOn(globalThis, 'setInterval').mockImplementation(((fn: () => void, ms?: number) => {
      const handle = setInterval(fn, ms)
      if (ms === 250) live.add(handle)
      return handle
    }) as typeof globalThis.setInterval)
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((handle: Parameters<typeof clearInterval>[0]) => {
      live.delete(handle)
      clearInterval(handle)
    }) as typeof globalThis.clearInterval)

    const queueServer = resolveQueue(server.url)!
    const counters = new SharedState(queueServer)
    const queue = new BullmqQueue({
      server: queueServer,
      destinations: new Map(),
      concurrency: 2,
      maxPending: 1_000,
      tally: new Tally(['web']),
      log: createLogger('analytics:collector', false),
      onError: () => {},
      counters,
    })
    let closed: Promise<unknown> | undefined
    const read = counters.read.bind(counters)
    vi.spyOn(counters, 'read').mockImplementation(async () => {
      // The first read, as the opening makes it: close() comes now, before it has answered.
      closed ??= queue.close(5_000)
      return read()
    })
    await queue.ready().catch(() => {})
    await closed
    expect(closed).toBeDefined()
    expect(live.size).toBe(0)
  }, 30_000)
})
