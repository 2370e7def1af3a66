/**
 * A black-hole ingest (issue 45): a real loopback TCP server that accepts every connection, reads
 * what is sent and never answers. 200,000 `track()` calls over 40 s (fake time: the client's
 * request time limit and its retry waits are timers) keep what the client holds (queued plus in
 * flight) within its `maxQueueSize` at every step; the time limit fires (`'retry'` then `'error'`
 * with `TimeoutError`); what does not fit is dropped and reported (`QueueFullError` carrying the
 * messages, counted in `stats().dropped`); sockets stay within `maxConcurrentRequests`;
 * and `close(bound)` reports the rest. Every call is accounted for at the end.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Client, isQueueFullError, isTimeoutError } from '../../src/index.js'
import { until } from '../collector/helpers.js'

const CALLS = 200_000
const CHUNK = 1_000
const MAX_QUEUE = 2_000
const CONCURRENCY = 4

let hole: Server | undefined
const sockets = new Set<Socket>()
afterEach(async () => {
  vi.useRealTimers()
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => (hole ? hole.close(resolve) : resolve(undefined)))
})

describe('a black-hole ingest', () => {
  it('200,000 track() calls: held messages stay within maxQueueSize, timeouts fire, drops are reported', async () => {
    let open = 0
    let mostOpen = 0
    let connections = 0
    hole = createServer((socket) => {
      connections++
      sockets.add(socket)
      mostOpen = Math.max(mostOpen, ++open)
      socket.on('data', () => {}) // Read, never answered.
      socket.on('close', () => (open--, sockets.delete(socket)))
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => hole!.listen(0, '127.0.0.1', resolve))
    const { port } = hole.address() as { port: number }
    // Timers only: sockets, setImmediate (the `until` helper) and the clock stay real.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })

    const client = new Client('black-hole-key', {
      endpoint: `http://127.0.0.1:${port}`,
      maxQueueSize: MAX_QUEUE,
      maxConcurrentRequests: CONCURRENCY,
      timeout: 2_000,
      maxRetries: 1,
      flushAt: 50,
    })
    const retries: Error[] = []
    const failed = { timeout: 0, other: 0 }
    let dropReports = 0
    let droppedReported = 0
    client.on('retry', ({ error }) => retries.push(error))
    client.on('error', (error) => {
      const count = error.messages.length
      if (isQueueFullError(error)) {
        dropReports++
        droppedReported += count
      } else if (isTimeoutError(error)) failed.timeout += count
      else failed.other += count
    })

    let mostHeld = 0
    for (let sent = 0; sent < CALLS; sent += CHUNK) {
      for (let i = 0; i < CHUNK; i++) client.track({ userId: `u-${(sent + i) % 97}`, event: 'Into The Void', properties: { i: sent + i } })
      const { queued, inFlight } = client.stats()
      mostHeld = Math.max(mostHeld, queued + inFlight)
      expect(queued + inFlight).toBeLessThanOrEqual(MAX_QUEUE)
      await vi.advanceTimersByTimeAsync(200)
      // Real I/O: the requests started reach the server (each one's time limit counts from its socket).
      if (connections < CONCURRENCY) await until(() => connections >= CONCURRENCY, 'the first connections', 5_000)
      await new Promise((resolve) => setImmediate(resolve))
    }

    const beforeClose = client.stats()
    expect(beforeClose.delivered).toBe(0)
    expect(mostHeld).toBe(MAX_QUEUE)
    // The time limit fired: retried once, then failed for good with TimeoutError.
    expect(retries.length).toBeGreaterThan(0)
    expect(retries.every((e) => isTimeoutError(e))).toBe(true)
    expect(failed.timeout).toBeGreaterThan(0)
    expect(failed.other).toBe(0)
    // Drops: reported with their messages, one report per burst at most, counted.
    expect(droppedReported).toBe(beforeClose.dropped)
    expect(beforeClose.dropped).toBeGreaterThan(CALLS - MAX_QUEUE - failed.timeout - CHUNK)
    expect(dropReports).toBeLessThanOrEqual(CALLS / CHUNK)
    // Never more sockets than requests allowed at once (plus one the client destroyed whose close
    // the server had not seen yet when the next one came: a batch takes a connection slot again
    // as soon as its last attempt timed out).
    expect(mostOpen).toBeLessThanOrEqual(CONCURRENCY + 1)
    // One connection per attempt (nothing is answered, so none is reused): first attempts and retries.
    expect(connections).toBeLessThanOrEqual(retries.length + failed.timeout / 50 + 2 * CONCURRENCY)

    const closing = client.close(1_000)
    await vi.advanceTimersByTimeAsync(1_000)
    const result = await closing
    await vi.advanceTimersByTimeAsync(0)
    const after = client.stats()
    expect(after.queued + after.inFlight).toBe(0)
    expect(after.delivered).toBe(0)
    expect(after.failed + after.dropped).toBe(CALLS)
    expect(failed.timeout + failed.other + droppedReported).toBe(CALLS)
    expect(result.delivered).toBe(0)
  }, 60_000)
})
