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
 * The event, the child-process plumbing and the e2e part itself are in bench/support.mjs and
 * bench/client-e2e.mjs.
 */
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { partE2E } from './client-e2e.mjs'
import { DIST, log, makeEvent, median, runJsonChild } from './support.mjs'

const SELF = fileURLToPath(import.meta.url)

// ---------------------------------------------------------------------------------------------
// (1) track() cost, in a child

/**
 * `transport`: `node`, the client as Node users get it (its Node transport, which keeps queued
 * messages as bytes outside the heap), posting to the loopback sink in its own process; or
 * `fetch`, a `fetch` of the caller's own that answers 200 at once (the queue then holds strings).
 * flushAt and maxQueueSize are huge, so that track() only validates, stamps, serialises and
 * enqueues; the queue is flushed (untimed) between runs.
 */
async function partTrack(transport) {
  const { Client } = await import(pathToFileURL(DIST).href)
  const { spawnSink } = await import('./sink.mjs')
  const server = transport === 'node' ? await spawnSink() : undefined
  const ok = () => Promise.resolve(new Response('{"success":true}', { status: 200 }))
  const client = new Client('bench-key', { ...(server ? { endpoint: server.url } : { fetch: ok }), flushAt: 1_000_000, maxQueueSize: 10_000_000, flushAfter: 3_600_000 })
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
  await server?.stop()
  return { nsPerCall: median(perCall), cpuNsPerCall: median(cpuPerCall), runs: perCall, calls: CALLS, bytes, propertyCount, stringifyNs: median(strNs), sink }
}

// ---------------------------------------------------------------------------------------------
// (2) end to end, in a child running partE2E (bench/client-e2e.mjs). Also used by
// bench/faults.mjs with fault options for the sink.

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
  const t = await runJsonChild(SELF, ['--part', 'track', '--transport', 'node'])
  log(`client: message ${t.bytes} bytes, ${t.propertyCount} properties; runs (ns/call): ${t.runs.map((x) => x.toFixed(0)).join(' ')}`)
  rows.push({ name: `track() per call (${t.bytes}-byte msg, ${t.propertyCount} props)`, value: +(t.nsPerCall / 1000).toFixed(2), unit: 'µs', target: '≤ 3' })
  rows.push({ name: 'track() per call, process CPU time', value: +(t.cpuNsPerCall / 1000).toFixed(2), unit: 'µs', target: '' })
  rows.push({ name: 'for scale: one JSON.stringify of that msg', value: +(t.stringifyNs / 1000).toFixed(2), unit: 'µs', target: '' })
  const f = await runJsonChild(SELF, ['--part', 'track', '--transport', 'fetch'])
  log(`client: with a fetch of its own, runs (ns/call): ${f.runs.map((x) => x.toFixed(0)).join(' ')}`)
  rows.push({ name: 'track() per call, with a `fetch` option (queued as strings)', value: +(f.nsPerCall / 1000).toFixed(2), unit: 'µs', target: '' })

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
    process.stdout.write(`${JSON.stringify(await partTrack(argv[argv.indexOf('--transport') + 1]))}\n`)
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
