/**
 * The collector's delivery modes side by side: memory, Redis and PostgreSQL (BullMQ), with 1 and
 * 2 collector processes (each its own child, as in production), a fast loopback receiver (in this
 * process) and the load generator in another child. Per configuration:
 *
 *   - ingest: events/s answered 200 (batches of 20, forwarding on, 16 connections, 5 s);
 *   - deliveries/s: the events accepted, over the time until the receiver had every one;
 *   - p99 ingest latency of the requests answered 200;
 *   - cold p99: the same, in the first second after the collectors started listening. That
 *     second is a warm-up, as in bench/collector.mjs's ingest benchmark (JIT, connections, the
 *     queue server's first writes): its events are delivered before the measured 5 s start, and
 *     the other figures are of the measured 5 s;
 *   - peak RSS of the largest collector process;
 *   - CPU time of all collector processes per event (ingest and delivery): unlike the rates, it
 *     barely moves when other work shares the machine.
 *
 * The queue servers are started here (loopback, temporary directory), as the tests do.
 */
import { fork, spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createInterface } from 'node:readline'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { startPostgres, startRedis } from '../scripts/queue-servers.mjs'

const LOAD = fileURLToPath(new URL('./collector.mjs', import.meta.url))
const COLLECTOR_PROCESS = fileURLToPath(new URL('../test/collector/durable/collector-process.mjs', import.meta.url))
const COLLECTOR = process.env.BENCH_DIST
  ? new URL('collector.js', pathToFileURL(process.env.BENCH_DIST)).href
  : new URL('../dist/collector.js', import.meta.url).href
const BATCH = 20
const LOAD_MS = 5_000
const WARM_MS = 1_000

function receiver() {
  const state = { count: 0, lastAt: 0 }
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      state.count++
      state.lastAt = performance.now()
      res.end()
    })
  })
  server.keepAliveTimeout = 30_000
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ state, server, url: `http://127.0.0.1:${server.address().port}/hook` })))
}

async function startCollector(env) {
  const child = spawn(process.execPath, [COLLECTOR_PROCESS], {
    env: { ...process.env, WRITE_KEY: 'bench-key', COLLECTOR_MODULE: COLLECTOR, MAX_PENDING: '10000000', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout })
  const port = await new Promise((resolve, reject) => {
    lines.on('line', (line) => {
      const parsed = JSON.parse(line)
      if (parsed.port) resolve(parsed.port)
    })
    child.once('exit', (code) => reject(new Error(`collector exited (${code})`)))
  })
  return { child, url: `http://127.0.0.1:${port}` }
}

/** User + system CPU of a process so far, ms (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}
const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024

function load(urls, durationMs) {
  const proc = fork(LOAD, ['--load'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    proc.once('message', resolve)
    proc.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited (${code})`)))
    proc.send({ urls, durationMs, concurrency: 16, batchSize: BATCH })
  })
}

/** Resolves once the receiver has `count` deliveries (at most 180 s). */
async function delivered(hook, count, what) {
  const deadline = performance.now() + 180_000
  while (hook.state.count < count) {
    if (performance.now() > deadline) throw new Error(`${what}: only ${hook.state.count} of ${count} delivered in 180 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function measure(mode, processes, queueUrl) {
  const hook = await receiver()
  const collectors = await Promise.all(
    Array.from({ length: processes }, () => startCollector({ WEBHOOK: hook.url, ...(queueUrl && { QUEUE: queueUrl }) })),
  )
  const urls = collectors.map((c) => c.url)
  try {
    const warm = await load(urls, WARM_MS)
    if (warm.refused > 0) throw new Error(`${mode}: ${warm.refused} batches refused in the warm-up`)
    await delivered(hook, warm.ok * BATCH, `${mode} warm-up`)
    const before = hook.state.count
    const cpuBefore = collectors.reduce((sum, c) => sum + cpuMs(c.child.pid), 0)
    const start = performance.now()
    const { ok, refused, elapsedMs, p99 } = await load(urls, LOAD_MS)
    if (refused > 0) throw new Error(`${mode}: ${refused} batches refused`)
    const events = ok * BATCH
    await delivered(hook, before + events, mode)
    const rss = Math.max(...collectors.map((c) => peakRssMb(c.child.pid)))
    const cpu = collectors.reduce((sum, c) => sum + cpuMs(c.child.pid), 0) - cpuBefore
    return {
      ingest: events / (elapsedMs / 1_000),
      deliveries: events / ((hook.state.lastAt - start) / 1_000),
      p99,
      coldP99: warm.p99,
      rss,
      cpuUsPerEvent: (cpu * 1_000) / events,
      duplicates: hook.state.count - before - events,
    }
  } finally {
    await Promise.all(collectors.map((c) => new Promise((resolve) => {
      c.child.once('exit', resolve)
      c.child.kill('SIGKILL')
    })))
    hook.server.closeAllConnections()
    hook.server.close()
  }
}

/** Issue 14's targets: ingest per process (so with 2 processes, twice that in all). */
const TARGETS = {
  memory: { ingest: 20_000, deliveries: '≥ 2000' },
  Redis: { ingest: 20_000, deliveries: '≥ 2000' },
  PostgreSQL: { ingest: 20_000, deliveries: '≥ 1000' },
}

export async function run() {
  const only = (process.env.BENCH_MODES ?? 'memory,Redis,PostgreSQL').split(',')
  const rows = []
  for (const mode of ['memory', 'Redis', 'PostgreSQL'].filter((m) => only.includes(m))) {
    for (const processes of [1, 2]) {
      // A fresh server per configuration: no backlog or dedup ids left from the previous one.
      const server = mode === 'Redis' ? await startRedis() : mode === 'PostgreSQL' ? await startPostgres() : undefined
      try {
        const r = await measure(mode, processes, server?.url)
        const label = `collector ${mode}, ${processes} process${processes > 1 ? 'es' : ''}`
        console.error(`${label}: ${JSON.stringify(r)}`)
        rows.push(
          { name: `${label}: ingest (batches of 20, forwarding on)`, value: Math.round(r.ingest), unit: 'events/s', target: `≥ ${TARGETS[mode].ingest * processes}` },
          { name: `${label}: deliveries`, value: Math.round(r.deliveries), unit: 'deliveries/s', target: TARGETS[mode].deliveries },
          { name: `${label}: p99 ingest latency`, value: Math.round(r.p99 * 10) / 10, unit: 'ms', target: '≤ 50' },
          { name: `${label}: cold p99 (first second after start)`, value: Math.round(r.coldP99 * 10) / 10, unit: 'ms', target: '' },
          { name: `${label}: peak RSS (largest process)`, value: Math.round(r.rss), unit: 'MB', target: '' },
          { name: `${label}: collector CPU per event (ingest + delivery)`, value: Math.round(r.cpuUsPerEvent), unit: 'µs', target: '' },
        )
      } finally {
        await server?.stop()
      }
    }
  }
  // One line of the durable table of docs/performance.md per mode and process count (see bench/run.mjs).
  return rows.map((row) => ({ ...row, group: row.name.slice(0, row.name.indexOf(': ')) }))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.table(await run())
  process.exit(0)
}
