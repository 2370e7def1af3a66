/**
 * A collector with a `queue` is made once durable mode is loaded (`import()`), a moment after
 * `createCollector` returns: what is called before then (a real Redis), and what happens when
 * durable mode cannot be loaded (`startDurable` given a load that fails).
 */
import { describe, expect, it } from 'vitest'
import { ClientClosedError, ValidationError } from '../../../src/errors.js'
import { createCollector } from '../../../src/collector/index.js'
import { resolveConfig } from '../../../src/collector/config.js'
import { startDurable } from '../../../src/collector/durable-start.js'
import { createSourceRuntime } from '../../../src/collector/sources.js'
import { coreOf } from '../../../src/collector/http/direct.js'
import { startRedis } from '../../helpers/queue-servers.js'
import { SECRET, startReceiver, until } from './support.js'

const ZERO = { requests: 0, rejected: 0, metrics: 0, lastReceivedAt: undefined, received: 0, skipped: 0, blocked: 0, forwarded: 0, failed: 0, retries: 0, deduplicated: 0, pending: 0, retrying: 0 }

describe('calls made before durable mode is loaded', () => {
  it('a deletion is checked at once and sent once it is, stats() counts nothing, close() waits for it', async () => {
    const redis = await startRedis()
    const receiver = await startReceiver(() => 200)
    const errors: unknown[] = []
    try {
      const collector = createCollector({
        sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: receiver.url }], sharedSecret: SECRET } }],
        queue: redis.url,
        onError: (error) => void errors.push(error),
      })
      // Synchronously after createCollector: nothing of durable mode is loaded yet.
      expect(collector.stats()).toEqual(ZERO)
      expect(() => collector.requestDeletion({ userId: 'u-1', sources: ['nope'] })).toThrow(ValidationError)
      const dispatch = collector.requestDeletion({ userId: 'u-1' })
      expect(dispatch.sources).toEqual(['web'])
      expect(dispatch.payloads).toEqual([expect.objectContaining({ type: 'delete', userId: 'u-1' })])
      await dispatch.queued
      await until(() => receiver.accepted.length === 1, 'the deletion delivered')
      expect(JSON.parse(receiver.accepted[0]!.raw)).toEqual(JSON.parse(JSON.stringify(dispatch.payloads[0])))
      const report = await collector.close()
      expect(report).toMatchObject({ drained: true, queueReached: true })
      expect(collector.closed).toBe(true)
      expect(() => collector.requestDeletion({ userId: 'u-2' })).toThrow(ClientClosedError)
      expect(errors).toEqual([])
    } finally {
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)
})

describe('durable mode that cannot be loaded', () => {
  it('is reported once; requests are answered 500 INTERNAL, admin calls reject with it, close() resolves at once', async () => {
    const errors: Error[] = []
    const config = resolveConfig({
      sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: 'http://127.0.0.1:9/hook' }] } }],
      queue: 'redis://127.0.0.1:9',
      onError: (error) => void errors.push(error as Error),
    })
    const sources = config.sources.map((source, i) => createSourceRuntime(source, i, config))
    const collector = startDurable(config, sources, () => Promise.reject(new Error("Cannot find module './durable-X.js'")))
    const deletion = collector.requestDeletion({ userId: 'u-1' })
    expect(deletion.sources).toEqual(['web'])
    const request = () => new Request('http://collector/v1/batch', { method: 'POST', headers: { authorization: `Basic ${btoa('KEY:')}` }, body: '{"batch":[]}' })
    const response = await collector.fetch(request())
    expect(response.status).toBe(500)
    const message = "The collector's durable mode (its `queue` option) could not be loaded: Cannot find module './durable-X.js'"
    expect(await response.json()).toEqual({ success: false, error: { code: 'INTERNAL', message } })
    // The Node server's direct path answers the same.
    const answer = await coreOf(collector.fetch)!(request(), request)
    expect('status' in answer && answer.status).toBe(500)
    await expect(deletion.queued).rejects.toThrow(message)
    expect(await deletion.settled).toEqual({ delivered: 0, failed: 0 })
    await expect(collector.syncAudience({ source: 'web', audience: 'Gold', members: ['u1'] })).rejects.toThrow(message)
    expect(collector.stats()).toEqual(ZERO)
    expect(await collector.close()).toEqual({ drained: true, pending: 0, stopped: 0, queueReached: false, stats: ZERO })
    expect(errors.map((e) => e.message)).toEqual([message])
  })
})
