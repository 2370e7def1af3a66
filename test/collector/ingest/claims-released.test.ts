/**
 * A request that fails after some of its messages' ids were claimed for de-duplication (here: a
 * payload that cannot be built, forced) lets them go: the sender's retry is forwarded, not
 * counted a duplicate and dropped.
 */
import { describe, expect, it, vi } from 'vitest'
import { forwardingCollector, post, track, until } from '../helpers.js'

vi.mock('../../../src/webhooks/payload.js', async (original) => {
  const real = await original<typeof import('../../../src/webhooks/payload.js')>()
  return {
    ...real,
    payloadOfValidMessage: (message: Record<string, unknown>) => {
      if (message.messageId === 'm-breaks') throw new Error('payload cannot be built')
      return real.payloadOfValidMessage(message as never)
    },
  }
})

describe('de-duplication claims of a failed request', () => {
  it('are released: the good message of the failed request, sent again, is forwarded', async () => {
    const { collector, calls } = forwardingCollector({ onError: () => {} })
    const failed = await collector.fetch(post({ batch: [track({ messageId: 'm-ok' }), track({ messageId: 'm-breaks' })] }))
    expect(failed.status).toBe(500)
    expect(calls).toHaveLength(0)
    expect((await collector.fetch(post({ batch: [track({ messageId: 'm-ok' })] }))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(collector.stats()).toMatchObject({ deduplicated: 0 })
    await collector.close()
  })
})
