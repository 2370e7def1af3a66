/**
 * A traced delivery in the durable mode: a `BullmqQueue` built in this process on the suite's
 * real server, its `TraceSink` recording every call. The first attempt (made inside the `batch`
 * job) fails with 503, its retry (a `deliver` job) succeeds: attempt, retry, attempt, settled.
 * No attempt starts before the queue's `startAfter` settles (the collector's saved settings).
 */
import { expect } from 'vitest'
import { BullmqQueue } from '../../../src/collector/delivery/bullmq-queue.js'
import type { DeliveryTrace } from '../../../src/collector/delivery/queue.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { Tally } from '../../../src/collector/stats.js'
import { WebhookDestination } from '../../../src/webhooks/index.js'
import { SECRET, startReceiver, until } from './support.js'

export async function tracedDeliveryReportsEachAttempt(url: string): Promise<void> {
  let answers = 0
  const receiver = await startReceiver(() => (answers++ === 0 ? 503 : 200))
  const server = { kind: url.startsWith('redis') ? 'redis' : 'postgres', url } as const
  // Its own source name: a job another test's process left behind is not delivered here.
  const source = 'traced'
  const calls: unknown[][] = []
  const traces = (traceId: string): DeliveryTrace => ({
    attempt: (attempt, urls) => calls.push([traceId, 'attempt', attempt, urls]),
    retry: (attempt, results, delayMs) => calls.push([traceId, 'retry', attempt, results.map((r) => r.status), delayMs >= 0]),
    settled: (delivered, results) => calls.push([traceId, 'settled', delivered, results.map((r) => r.status)]),
    late: (result) => calls.push([traceId, 'late', result.status]),
  })
  const destination = new WebhookDestination({ urls: [{ url: receiver.url }], sharedSecret: SECRET, backoff: { baseMs: 50 } })
  const counters = new SharedState(server)
  const errors: unknown[] = []
  // The gate is awaited by the job that took the delivery: `then` is how we see it waiting.
  let release = () => {}
  let waiting = false
  const gate = new Promise<void>((resolve) => (release = resolve))
  const startAfter = { then: (...args: Parameters<Promise<void>['then']>) => ((waiting = true), gate.then(...args)) } as Promise<void>
  const queue = new BullmqQueue({
    server,
    destinations: new Map([[source, destination]]),
    concurrency: 4,
    maxPending: 100,
    tally: new Tally([source]),
    log: Object.assign(() => {}, { enabled: false }),
    onError: (error) => errors.push(error),
    counters,
    traces,
    startAfter,
  })
  try {
    await queue.ready()
    const body = JSON.stringify({ type: 'track', event: 'Traced', userId: 'u-t', messageId: `traced-${Date.now()}` })
    expect(await queue.enqueue([{ source, type: 'track', body, messageId: JSON.parse(body).messageId, traceId: 'trace-1' }])).toBe(true)
    await until(() => waiting, 'the worker to take the job and wait for the gate')
    expect([calls, receiver.attempts]).toEqual([[], []])
    release()
    await until(() => calls.some((c) => c[1] === 'settled'), 'the traced delivery to settle', 15_000)
    expect(calls).toEqual([
      ['trace-1', 'attempt', 1, [receiver.url]],
      ['trace-1', 'retry', 1, [503], true],
      ['trace-1', 'attempt', 2, [receiver.url]],
      ['trace-1', 'settled', true, [200]],
    ])
    expect(receiver.accepted.map((r) => [r.raw, r.signatureValid])).toEqual([[body, true]])
    expect(errors).toEqual([])
  } finally {
    await queue.close(1_000)
    await receiver.close()
  }
}
