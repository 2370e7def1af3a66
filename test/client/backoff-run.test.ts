/**
 * Backoff follows the server's health, not one batch's luck: a batch's backoff exponent is its
 * retry number capped by the run of consecutive failed attempts across the client. In an outage
 * (every attempt fails) delays double per retry as usual; while other batches succeed, an
 * unlucky batch keeps retrying at the first retry's delay.
 */
import { delay } from 'msw'
import { describe, expect, it, vi } from 'vitest'
import { collector, createTestClient, HttpResponse, installServer, listen, settle, trackInput } from '../helpers/client.js'

installServer()

/** The fake-time instants at which requests carrying `event` arrived. */
function arrivals(events: string[], event: string, at: number[]): void {
  if (events.includes(event)) at.push(Date.now())
}

const gaps = (times: number[]) => times.slice(1).map((t, i) => t - times[i])

describe('backoff and the failure run', () => {
  it('in an outage (every attempt fails) the delay ceiling doubles with each retry', async () => {
    vi.useFakeTimers({ now: 0 })
    vi.spyOn(Math, 'random').mockReturnValue(0.999) // each delay at its ceiling
    const at: number[] = []
    collector((req) => {
      arrivals(req.body.batch.map((m) => m.event as string), 'Unlucky', at)
      return new HttpResponse(null, { status: 503 })
    })
    const client = createTestClient({ flushAt: 1, maxRetries: 4, minRetryDelay: 100, maxRetryDelay: 10_000 })
    listen(client)
    client.track(trackInput(0, { event: 'Unlucky' }))
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    expect(gaps(at)).toEqual([99, 199, 399, 799])
  })

  it('while other batches succeed, an unlucky batch retries at the first delay instead of doubling', async () => {
    vi.useFakeTimers({ now: 0 })
    vi.spyOn(Math, 'random').mockReturnValue(0.999)
    const at: number[] = []
    let unluckyFailures = 0
    collector((req) => {
      const events = req.body.batch.map((m) => m.event as string)
      arrivals(events, 'Unlucky', at)
      if (events.includes('Unlucky') && unluckyFailures++ < 4) return new HttpResponse(null, { status: 500 })
      return HttpResponse.json({ success: true })
    })
    const client = createTestClient({ flushAt: 1, maxRetries: 4, minRetryDelay: 100, maxRetryDelay: 10_000 })
    listen(client)
    client.track(trackInput(0, { event: 'Unlucky' }))
    // Healthy traffic from the same client between the unlucky batch's attempts.
    for (let i = 1; i <= 40; i++) {
      await vi.advanceTimersByTimeAsync(25)
      client.track(trackInput(i, { event: 'Lucky' }))
    }
    await settle(client.flush())
    expect(client.stats()).toMatchObject({ delivered: 41, failed: 0 })
    expect(at).toHaveLength(5)
    for (const gap of gaps(at)) expect(gap).toBeLessThanOrEqual(100)
  })

  it('a long run of failures across batches backs a fresh batch off as far as its own retries allow', async () => {
    vi.useFakeTimers({ now: 0 })
    vi.spyOn(Math, 'random').mockReturnValue(0.999)
    const at: number[] = []
    collector((req) => {
      arrivals(req.body.batch.map((m) => m.event as string), 'Late', at)
      return new HttpResponse(null, { status: 503 })
    })
    const client = createTestClient({ flushAt: 1, maxRetries: 2, minRetryDelay: 100, maxRetryDelay: 10_000 })
    listen(client)
    for (let i = 0; i < 5; i++) client.track(trackInput(i))
    await vi.advanceTimersByTimeAsync(50) // five first attempts failed: the run is 5
    client.track(trackInput(9, { event: 'Late' }))
    await settle(client.flush())
    // Its first retry is still capped by its own retry number (1), then doubles.
    expect(gaps(at)).toEqual([99, 199])
  })
})

describe('abort signals', () => {
  it('many batches waiting on a slow server add no process warning (one signal per batch)', async () => {
    vi.useFakeTimers({ now: 0 })
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      collector(async () => {
        await delay(1000)
        return HttpResponse.json({ success: true })
      })
      const client = createTestClient({ flushAt: 1, maxConcurrentRequests: 2 })
      for (let i = 0; i < 30; i++) client.track(trackInput(i))
      expect(await settle(client.flush())).toEqual({ delivered: 30, failed: 0 })
      await new Promise((resolve) => process.nextTick(resolve)) // warnings are emitted on next tick
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
    }
  })
})
