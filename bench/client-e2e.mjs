/**
 * The end-to-end part of bench/client.mjs, run in its own child (`node bench/client.mjs --part e2e
 * --config <json>`, started by `runE2E()` there): a producer tracks events into the client, which
 * delivers them to a loopback sink in another process (bench/sink.mjs); the result is timing, CPU,
 * memory, retry and delivery accounting as one JSON object. bench/faults.mjs runs it with faulty
 * sinks and every messageId tracked.
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { DIST, makeEvent } from './support.mjs'

/** API.md's default `maxQueueSize`; the producer below keeps under it, it is never passed. */
const DEFAULT_MAX_QUEUE_SIZE = 10_000

/**
 * config: { events, sink: {errorRate, resetRate, hangRate, hangMs, seed}, trackIds: boolean,
 *           wallLimitMs }
 *
 * Backpressure: a real server does not call track() 100,000 times in one synchronous burst; it
 * produces as requests arrive, yielding to the event loop. The producer here tracks in chunks of
 * CHUNK events, yielding (setImmediate) after each chunk, and before a chunk checks
 * stats().queued + stats().inFlight: if the chunk would not fit under maxQueueSize (the default,
 * 10,000), it awaits the next 'flush' or 'error' event (each frees a batch worth of room) and
 * checks again. So nothing is dropped (stats().dropped is reported and must be 0) and the
 * client's own bound is what paces the producer.
 */
export async function partE2E(config) {
  const unhandled = { count: 0, samples: [] }
  process.on('unhandledRejection', (reason) => {
    unhandled.count++
    if (unhandled.samples.length < 3) unhandled.samples.push(String(reason?.stack ?? reason).slice(0, 300))
  })
  const { spawnSink } = await import('./sink.mjs')
  const sink = await spawnSink(config.sink ?? {})
  const { Client } = await import(pathToFileURL(DIST).href)
  const N = config.events
  const CHUNK = 500
  const POOL = 1024
  const inputs = Array.from({ length: POOL }, (_, i) => makeEvent(i))

  let peakRss = process.memoryUsage().rss
  const peakMem = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }
  const sampler = setInterval(() => {
    const mem = process.memoryUsage()
    if (mem.rss > peakRss) peakRss = mem.rss
    for (const k of Object.keys(peakMem)) if (mem[k] > peakMem[k]) peakMem[k] = mem[k]
  }, 50)

  // Default options; `clientOptions` exists only for diagnostics by hand, the benches never pass it.
  const client = new Client('bench-key', { endpoint: sink.url, ...config.clientOptions })
  const tracked = config.trackIds ? new Set() : undefined
  const deliveredIds = config.trackIds ? new Set() : undefined
  const failedIds = config.trackIds ? new Set() : undefined
  let failedReported = 0
  const failReasons = {}
  const failSamples = []
  /** retryHistogram[n]: how many times attempt n failed and was retried. */
  const retryHistogram = {}
  // Drain diagnostics: settle times of what was outstanding at the last track(), and the longest
  // retry chain seen during the drain.
  let drainStart = 0
  const drainSettles = []
  let drainMaxAttempt = 0
  const settled = (n) => {
    if (drainStart) drainSettles.push([performance.now() - drainStart, n])
  }
  client.on('retry', ({ attempt }) => {
    retryHistogram[attempt] = (retryHistogram[attempt] ?? 0) + 1
    if (drainStart && attempt > drainMaxAttempt) drainMaxAttempt = attempt
  })
  let waiters = []
  const wake = () => {
    const w = waiters
    waiters = []
    for (const f of w) f()
  }
  client.on('flush', ({ messages }) => {
    if (deliveredIds) for (const m of messages) deliveredIds.add(m.messageId)
    settled(messages.length)
    wake()
  })
  client.on('error', (error) => {
    failedReported += error.messages.length
    if (failSamples.length < 5) {
      failSamples.push({ code: error.code, status: error.status, attempts: error.attempts, message: String(error.message).slice(0, 160), n: error.messages.length })
    }
    failReasons[error.code ?? error.name] = (failReasons[error.code ?? error.name] ?? 0) + error.messages.length
    if (failedIds) for (const m of error.messages) failedIds.add(m.messageId)
    settled(error.messages.length)
    wake()
  })
  const room = () => new Promise((resolve) => waiters.push(resolve))

  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  let waits = 0
  let sent = 0
  let aborted = false
  while (sent < N) {
    if (config.wallLimitMs && performance.now() - t0 > config.wallLimitMs) {
      aborted = true
      break
    }
    const s = client.stats()
    const chunk = Math.min(CHUNK, N - sent)
    if (s.queued + s.inFlight + chunk > (config.clientOptions?.maxQueueSize ?? DEFAULT_MAX_QUEUE_SIZE)) {
      waits++
      await room()
      continue
    }
    for (let k = 0; k < chunk; k++, sent++) {
      const m = client.track(inputs[sent & (POOL - 1)])
      if (tracked) tracked.add(m.messageId)
    }
    await new Promise((r) => setImmediate(r))
  }
  const tLast = performance.now()
  drainStart = tLast
  const outstanding = client.stats()
  const result = await client.flush()
  const tEnd = performance.now()
  const cpu = process.cpuUsage(cpu0)
  clearInterval(sampler)
  const stats = client.stats()
  await client.close()

  // Untimed: read the sink's view.
  let vmHwm
  try {
    vmHwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
  } catch {}
  const sinkStats = await sink.stats()
  let accounting
  if (tracked) {
    const sinkIds = await sink.ids()
    let deliveredOrFailed = 0
    let atSink = 0
    let lost = 0
    let deliveredNotAtSink = 0
    for (const id of tracked) {
      const d = deliveredIds.has(id)
      const f = failedIds.has(id)
      const s = sinkIds.has(id)
      if (d || f) deliveredOrFailed++
      if (s) atSink++
      if (!d && !f && !s) lost++
      if (d && !s) deliveredNotAtSink++
    }
    accounting = { tracked: tracked.size, deliveredOrFailed, atSink, lost, deliveredNotAtSink, failedIds: failedIds.size }
  }
  await sink.stop()
  return {
    events: N,
    sent,
    aborted,
    wallMs: tEnd - t0,
    drainMs: tEnd - tLast,
    drain: (() => {
      const total = outstanding.queued + outstanding.inFlight
      let acc = 0
      const at = (q) => drainSettles.find(([, n]) => (acc += n) >= q * total)?.[0]
      const p50 = at(0.5)
      acc = 0
      const p99 = at(0.99)
      return { outstanding: total, p50Ms: p50, p99Ms: p99, maxRetryAttempt: drainMaxAttempt }
    })(),
    cpuUs: cpu.user + cpu.system,
    peakRssSampled: peakRss,
    peakMem,
    vmHwm,
    flushResult: result,
    clientStats: stats,
    failedReported,
    failReasons,
    failSamples,
    retryHistogram,
    backpressureWaits: waits,
    unhandled,
    sink: sinkStats,
    accounting,
  }
}
