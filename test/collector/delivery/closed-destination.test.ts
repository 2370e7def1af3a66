/**
 * The durable runner meets a closed `WebhookDestination`: `attempt()` sends nothing, and the
 * runner keeps the job for a later attempt instead of counting the message failed. No queue
 * server: the job, the queue and the shared counters are stand-ins for what `#deliver` touches.
 */
import { describe, expect, it, vi } from 'vitest'
import { JobRunner, type DeliverData } from '../../../src/collector/delivery/bullmq-jobs.js'
import type { Pacer } from '../../../src/collector/delivery/pacer.js'
import type { SharedState } from '../../../src/collector/state/shared-state.js'
import { Stop } from '../../../src/transport/stop.js'
import { WebhookDestination } from '../../../src/webhooks/index.js'
import { useServers } from '../../webhooks/servers.js'

const server = useServers()

class DelayedError extends Error {}

describe('JobRunner with a closed destination', () => {
  it('moves the deliver job to the delayed set (kept, retried later): nothing sent, nothing counted failed', async () => {
    const receiver = await server({ status: 200 })
    const destination = new WebhookDestination({ urls: [{ url: receiver.url }] })
    await destination.close()
    const tally = { deduplicated: vi.fn(), forwarded: vi.fn(), failed: vi.fn(), retried: vi.fn() }
    const runner = new JobRunner({
      bullmq: { DelayedError } as never,
      queue: {} as never,
      add: async () => {},
      destinations: new Map([['web', destination]]),
      counters: { add: () => {} } as unknown as SharedState,
      tally,
      log: Object.assign(() => {}, { enabled: false }),
      report: () => {},
      traces: undefined,
      pacer: { admit: () => undefined, release: () => {} } as unknown as Pacer,
      closing: () => false,
      stop: new Stop(),
    })
    const data: DeliverData = { s: 'web', t: 'track', b: '{"type":"track"}', n: 1, f: Date.now() }
    const job = { name: 'deliver', data, updateData: vi.fn(async () => {}), moveToDelayed: vi.fn(async () => {}) }
    await expect(runner.process(job as never, 'token')).rejects.toBeInstanceOf(DelayedError)
    expect(job.updateData).toHaveBeenCalledWith(expect.objectContaining({ n: 2, u: [0], f: data.f }))
    expect(job.moveToDelayed).toHaveBeenCalledOnce()
    expect(tally.failed).not.toHaveBeenCalled()
    expect(tally.forwarded).not.toHaveBeenCalled()
    expect(receiver.requests).toHaveLength(0)
  })
})
