#!/usr/bin/env node
/**
 * Issue 2 targets: `track()` cost per call, end-to-end delivery of 100,000 events to a loopback
 * sink in another process (default options), and the import cost of the client entry.
 *
 *   node bench/client.mjs          prints a table
 *   node bench/client.mjs --json   prints the rows as JSON (what bench/run.mjs reads)
 *
 * Each measurement runs in a fresh child process of this file (`--part track|e2e`) so heap, RSS
 * and JIT state of one never colour another. `runE2E()` is also used by bench/faults.mjs.
 */
import { execFileSync, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const SELF = fileURLToPath(import.meta.url)
const ROOT = path.resolve(path.dirname(SELF), '..')
/** BENCH_DIST overrides the build under test (e.g. a frozen copy for profiling). */
const DIST = process.env.BENCH_DIST ?? path.join(ROOT, 'dist', 'index.js')
/** API.md's default `maxQueueSize`; the producer below keeps under it, it is never passed. */
const DEFAULT_MAX_QUEUE_SIZE = 10_000

// ---------------------------------------------------------------------------------------------
// The event: ~12 properties, a 600–680-byte message once stamped and serialised.

const PLANS = ['free', 'starter', 'pro', 'enterprise']
/** A track() input. `i` varies the ids and values so the inputs are not one constant object. */
export function makeEvent(i) {
  return {
    userId: `user_${String(i % 100_000).padStart(8, '0')}`,
    event: 'Order Completed',
    properties: {
      orderId: `ord_${String(i).padStart(10, '0')}_${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
      checkoutId: `chk_${(i * 40503 >>> 0).toString(36).padStart(8, '0')}`,
      total: (12999 + (i % 100)) / 100,
      revenue: (11735 + (i % 50)) / 100,
      shipping: 7.5,
      tax: 10.4,
      discount: 5,
      coupon: 'WINTER26',
      currency: 'EUR',
      affiliation: 'Online Store',
      plan: PLANS[i % PLANS.length],
      products: [
        { productId: 'sku_4f2a9c1e', name: 'Merino sweater, navy, M', price: 89.99, quantity: 1 },
        { productId: 'sku_7b3d0e55', name: 'Organic cotton t-shirt', price: 19.99, quantity: 2 },
      ],
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Child-process plumbing

function median(values) {
  const s = [...values].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Runs `node <file> ...args` and resolves with the JSON its stdout ends with. */
export function runJsonChild(file, args, { nodeArgs = [], timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, file, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${path.basename(file)} ${args.join(' ')} took over ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`${path.basename(file)} ${args.slice(0, 2).join(' ')} exited ${code ?? signal}`))
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)))
      } catch (error) {
        reject(new Error(`${path.basename(file)}: no JSON result on stdout: ${out.slice(-500)}`))
      }
    })
  })
}

const log = (...a) => process.stderr.write(`[bench] ${a.join(' ')}\n`)

// ---------------------------------------------------------------------------------------------
// (1) track() cost, in a child

async function partTrack() {
  const { Client } = await import(pathToFileURL(DIST).href)
  // No network: a fetch that answers 200 at once. flushAt/maxQueueSize huge so that track() only
  // validates, stamps, serialises and enqueues; the queue is flushed (untimed) between runs.
  const ok = () => Promise.resolve(new Response('{"success":true}', { status: 200 }))
  const client = new Client('bench-key', { fetch: ok, flushAt: 1_000_000, maxQueueSize: 10_000_000, flushAfter: 3_600_000 })
  const POOL = 1024
  const inputs = Array.from({ length: POOL }, (_, i) => makeEvent(i))
  const sample = client.track(inputs[0])
  const bytes = Buffer.byteLength(JSON.stringify(sample), 'utf8')
  const propertyCount = Object.keys(inputs[0].properties).length
  await client.flush()

  const CALLS = 20_000
  const RUNS = 9
  const WARMUP = 3
  const perCall = []
  // Process CPU time of the same runs (includes V8's GC helper threads): on a shared, loaded
  // machine wall time also counts time the thread was not scheduled; CPU time does not.
  const cpuPerCall = []
  let sink = 0
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < CALLS; i++) sink ^= client.track(inputs[i & (POOL - 1)]).messageId.length
    const ns = Number(process.hrtime.bigint() - t0) / CALLS
    const c = process.cpuUsage(c0)
    if (run >= WARMUP) {
      perCall.push(ns)
      cpuPerCall.push(((c.user + c.system) * 1000) / CALLS)
    }
    await client.flush()
  }
  // The same work without the client: one JSON.stringify of the finished message, for scale.
  const strNs = []
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < CALLS; i++) sink ^= JSON.stringify(sample).length
    if (run >= WARMUP) strNs.push(Number(process.hrtime.bigint() - t0) / CALLS)
  }
  await client.close()
  return { nsPerCall: median(perCall), cpuNsPerCall: median(cpuPerCall), runs: perCall, calls: CALLS, bytes, propertyCount, stringifyNs: median(strNs), sink }
}

// ---------------------------------------------------------------------------------------------
// (2) end to end, in a child. Also used by bench/faults.mjs with fault options for the sink.

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
async function partE2E(config) {
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

export function runE2E(config, timeoutMs) {
  return runJsonChild(SELF, ['--part', 'e2e', '--config', JSON.stringify(config)], { timeoutMs })
}

// ---------------------------------------------------------------------------------------------
// (3) import cost

function importCost() {
  const RUNS = 11
  const bare = []
  const imp = []
  // The exact commands of the issue, run from the folder that holds the dist/ under test.
  const cwd = path.dirname(path.dirname(DIST))
  const time = (args) => {
    const t0 = process.hrtime.bigint()
    execFileSync(process.execPath, args, { cwd, stdio: 'ignore' })
    return Number(process.hrtime.bigint() - t0) / 1e6
  }
  time(['-e', '0'])
  time(['-e', `import('./dist/${path.basename(DIST)}')`])
  for (let i = 0; i < RUNS; i++) {
    bare.push(time(['-e', '0']))
    imp.push(time(['-e', `import('./dist/${path.basename(DIST)}')`]))
  }
  // The same in CPU time (the child's own process.cpuUsage() at the end), less noisy under load.
  const cpu = (code) => Number(execFileSync(process.execPath, ['-e', code], { cwd, encoding: 'utf8' }).trim()) / 1000
  const report = "{const u=process.cpuUsage();console.log(u.user+u.system)}"
  const bareCpu = []
  const impCpu = []
  for (let i = 0; i < RUNS; i++) {
    bareCpu.push(cpu(report))
    impCpu.push(cpu(`import('./dist/${path.basename(DIST)}').then(()=>${report})`))
  }
  return { bareMs: median(bare), importMs: median(imp), deltaMs: median(imp) - median(bare), deltaCpuMs: median(impCpu) - median(bareCpu) }
}

// ---------------------------------------------------------------------------------------------

export async function run() {
  const rows = []
  log('client: track() cost')
  const t = await runJsonChild(SELF, ['--part', 'track'])
  log(`client: message ${t.bytes} bytes, ${t.propertyCount} properties; runs (ns/call): ${t.runs.map((x) => x.toFixed(0)).join(' ')}`)
  rows.push({ name: `track() per call (${t.bytes}-byte msg, ${t.propertyCount} props)`, value: +(t.nsPerCall / 1000).toFixed(2), unit: 'µs', target: '≤ 3' })
  rows.push({ name: 'track() per call, process CPU time', value: +(t.cpuNsPerCall / 1000).toFixed(2), unit: 'µs', target: '' })
  rows.push({ name: 'for scale: one JSON.stringify of that msg', value: +(t.stringifyNs / 1000).toFixed(2), unit: 'µs', target: '' })

  log('client: end to end, 100,000 events, default options')
  const e = await runE2E({ events: 100_000 }, 240_000)
  log(`client: e2e ${JSON.stringify({ ...e, sink: { ...e.sink, config: undefined } })}`)
  const ok = e.sink.unique === e.events && e.clientStats.dropped === 0 && e.flushResult.failed === 0
  rows.push({ name: 'e2e 100k: events/s', value: Math.round(e.events / (e.wallMs / 1000)), unit: 'ev/s', target: '' })
  rows.push({ name: 'e2e 100k: CPU per event (client process)', value: +(e.cpuUs / e.events).toFixed(2), unit: 'µs', target: '≤ 30' })
  rows.push({ name: 'e2e 100k: peak RSS (VmHWM)', value: +((e.vmHwm ?? e.peakRssSampled) / 2 ** 20).toFixed(1), unit: 'MiB', target: '' })
  rows.push({ name: 'e2e 100k: requests (sink)', value: e.sink.requests, unit: 'req', target: '' })
  rows.push({ name: 'e2e 100k: unique messageIds at sink', value: e.sink.unique, unit: 'msgs', target: '≥ 100000' })
  rows.push({ name: 'e2e 100k: dropped + failed', value: e.clientStats.dropped + e.flushResult.failed, unit: 'msgs', target: '≤ 0' })
  if (!ok) log('client: WARNING: not every event was delivered')

  log('client: import cost')
  const i = importCost()
  log(`client: import ${i.importMs.toFixed(1)} ms vs bare ${i.bareMs.toFixed(1)} ms`)
  rows.push({ name: "import('./dist/index.js') over node -e 0", value: +i.deltaMs.toFixed(1), unit: 'ms', target: '≤ 30' })
  rows.push({ name: 'import, process CPU time over bare', value: +i.deltaCpuMs.toFixed(1), unit: 'ms', target: '' })
  return rows
}

function printTable(rows) {
  for (const r of rows) console.log(`${r.name.padEnd(52)} ${String(r.value).padStart(10)} ${r.unit.padEnd(5)} ${r.target}`)
}

if (process.argv[1] === SELF) {
  const argv = process.argv.slice(2)
  const part = argv.includes('--part') ? argv[argv.indexOf('--part') + 1] : undefined
  if (part === 'track') {
    process.stdout.write(`${JSON.stringify(await partTrack())}\n`)
    process.exit(0)
  } else if (part === 'e2e') {
    const config = JSON.parse(argv[argv.indexOf('--config') + 1])
    process.stdout.write(`${JSON.stringify(await partE2E(config))}\n`)
    process.exit(0)
  } else {
    const rows = await run()
    if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(rows)}\n`)
    else printTable(rows)
  }
}
