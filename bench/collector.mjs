/**
 * Collector benchmarks, on loopback only (127.0.0.1), with the load generator in another process:
 *
 *   (a) ingest: the Node server accepting batches of 100 events, forwarding off; again with an
 *       int64 property in every event (integers beyond 2^53 take the exact-number parser);
 *   (b) end to end: events accepted and forwarded (signed) to a loopback webhook receiver,
 *       measured from the first request until the last payload was accepted by the receiver.
 *
 * `run()` returns rows `{ name, value, unit, target }`; run this file directly for a table.
 * Needs the build (`npm run build`): it measures dist/, what users run.
 */
import { fork } from 'node:child_process'
import http from 'node:http'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { leanConnection } from './lean-http.mjs'

const SELF = fileURLToPath(import.meta.url)
// bench/run.mjs freezes the build under test and names its index.js in BENCH_DIST.
const COLLECTOR = process.env.BENCH_DIST
  ? new URL('collector.js', pathToFileURL(process.env.BENCH_DIST)).href
  : new URL('../dist/collector.js', import.meta.url).href
const BATCH_SIZE = 100
const KEY = 'bench-key'

function batchBody(size, int64 = false) {
  const now = new Date().toISOString()
  const batch = Array.from({ length: size }, (_, i) => ({
    type: 'track',
    event: 'Product Viewed',
    userId: `user-${i % 50}`,
    // `@request` is replaced per request: every message is new (the collector de-duplicates ids).
    messageId: `m-${i}-@request`,
    timestamp: now,
    properties: { sku: `sku-${i}`, price: 19.99, currency: 'EUR', category: 'shoes', ...(int64 && { tweetId: '@int64' }) },
    context: { library: { name: 'isomorphic-analytics', version: '0.1.0' }, ip: '127.0.0.1' },
  }))
  const text = JSON.stringify({ batch, sentAt: now, context: { library: { name: 'isomorphic-analytics', version: '0.1.0' } } })
  // JSON.stringify cannot write an int64; a Go, Java or Python client writes these digits.
  return text.replaceAll('"@int64"', '9223372036854775807')
}

// ───────────────────────── child roles ─────────────────────────

/**
 * Sends batches of `batchSize` with `concurrency` keep-alive connections for `durationMs`, or
 * `totalBatches`; connection i goes to `urls[i % urls.length]` (or `url`). Reports the latency
 * percentiles of the requests answered 200.
 */
async function loadGenerator({ url, urls = [url], durationMs, totalBatches, concurrency, int64, batchSize = BATCH_SIZE }) {
  const [head, ...rest] = batchBody(batchSize, int64).split('@request')
  const headers = { 'Content-Type': 'application/json', Authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}` }
  // One keep-alive connection a worker, worker i to urls[i % urls.length] (./lean-http.mjs).
  const connections = Array.from({ length: concurrency }, (_, worker) => leanConnection(new URL('/v1/batch', urls[worker % urls.length]), headers))
  let ok = 0
  let refused = 0
  let started = 0
  const latencies = []
  const start = performance.now()
  const more = () => (totalBatches ? started < totalBatches : performance.now() - start < durationMs)
  const post = (worker, n) => connections[worker].post(head + rest.map((part) => `${process.pid}-${n}${part}`).join(''))
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (more()) {
        const n = started++
        const sentAt = performance.now()
        const status = await post(worker, n)
        if (status === 200) {
          ok++
          latencies.push(performance.now() - sentAt)
        } else refused++
      }
    }),
  )
  for (const connection of connections) connection.close()
  latencies.sort((a, b) => a - b)
  const p99 = latencies.length === 0 ? NaN : latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]
  return { ok, refused, elapsedMs: performance.now() - start, p99 }
}

/** A webhook receiver answering 200 at once; reports its URL. */
function receiver() {
  let count = 0
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      count++
      res.end()
    })
  })
  server.keepAliveTimeout = 30_000
  server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}/hook` }))
  process.on('message', (m) => m === 'count' && process.send({ count }))
}

if (process.argv[2] === '--load') {
  process.once('message', async (options) => {
    process.send(await loadGenerator(options))
    process.exit(0)
  })
} else if (process.argv[2] === '--receiver') {
  receiver()
}

// ───────────────────────── parent ─────────────────────────

function child(role) {
  const proc = fork(SELF, [role], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const next = () => new Promise((resolve, reject) => {
    proc.once('message', resolve)
    proc.once('exit', (code) => reject(new Error(`${role} child exited (${code})`)))
  })
  return { proc, next }
}

async function ingestBenchmark({ createCollector, startServer }, { int64 = false } = {}) {
  const collector = createCollector({ sources: [{ writeKey: KEY, name: 'bench' }] })
  const server = await startServer(collector, { port: 0, host: '127.0.0.1' })
  try {
    const warm = child('--load')
    warm.proc.send({ url: server.url, durationMs: 1_000, concurrency: 8, int64 })
    await warm.next()
    const load = child('--load')
    load.proc.send({ url: server.url, durationMs: 4_000, concurrency: 8, int64 })
    const { ok, refused, elapsedMs } = await load.next()
    if (refused > 0) throw new Error(`ingest: ${refused} batches refused`)
    return (ok * BATCH_SIZE) / (elapsedMs / 1_000)
  } finally {
    await server.close()
    await collector.close(0)
  }
}

async function endToEndBenchmark({ createCollector, startServer, nodeFetch }) {
  const hook = child('--receiver')
  const { url: hookUrl } = await hook.next()
  const batches = 200 // 20,000 events
  const events = batches * BATCH_SIZE
  const collector = createCollector({
    sources: [{ writeKey: KEY, name: 'bench', webhooks: { enabled: true, urls: [{ url: hookUrl }], sharedSecret: 'bench-secret' } }],
    maxPendingDeliveries: events,
    fetch: nodeFetch, // as the CLI runs it
  })
  const server = await startServer(collector, { port: 0, host: '127.0.0.1' })
  try {
    const start = performance.now()
    const load = child('--load')
    load.proc.send({ url: server.url, totalBatches: batches, concurrency: 4 })
    const { refused } = await load.next()
    if (refused > 0) throw new Error(`end to end: ${refused} batches refused`)
    const deadline = start + 60_000
    while (collector.stats().forwarded + collector.stats().failed < events) {
      if (performance.now() > deadline) throw new Error(`end to end: only ${collector.stats().forwarded} of ${events} forwarded in 60 s`)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const elapsed = performance.now() - start
    if (collector.stats().failed > 0) throw new Error(`end to end: ${collector.stats().failed} deliveries failed`)
    hook.proc.send('count')
    const { count } = await hook.next()
    if (count < events) throw new Error(`end to end: the receiver counted ${count} of ${events}`)
    return events / (elapsed / 1_000)
  } finally {
    await server.close()
    await collector.close(0)
    hook.proc.kill()
  }
}

export async function run() {
  const collectorModule = await import(COLLECTOR)
  return [
    { name: 'collector ingest (Node server, batches of 100, forwarding off)', value: Math.round(await ingestBenchmark(collectorModule)), unit: 'events/s', target: '≥ 50000' },
    { name: 'collector ingest, an int64 in every event (exact-number parser)', value: Math.round(await ingestBenchmark(collectorModule, { int64: true })), unit: 'events/s', target: '≥ 25000' },
    { name: 'collector end to end (ingest + signed webhook to loopback receiver)', value: Math.round(await endToEndBenchmark(collectorModule)), unit: 'events/s', target: '≥ 2000' },
  ]
}

if (process.argv[2] === undefined && process.argv[1] === SELF) {
  const rows = await run()
  const met = (r) => r.value >= Number(r.target.replace(/^≥\s*/, ''))
  console.table(rows.map((r) => ({ benchmark: r.name, value: `${r.value.toLocaleString('en')} ${r.unit}`, target: r.target, ok: met(r) ? '✓' : '✗' })))
  process.exit(rows.every(met) ? 0 : 1)
}
