#!/usr/bin/env node
/**
 * Issue 10's table: ours against posthog-node and @segment/analytics-node, in one run, with the
 * same event (bench/support.mjs `makeEvent`) and the same loopback sink in its own process
 * (bench/sink.mjs, which reads both wire formats). The peers are dependencies of bench/ (its own
 * package.json and lock), installed here with `npm ci` when missing; never of the package.
 *
 *   node bench/peers.mjs          prints a table
 *
 * Every figure is the median of three fresh child processes (`--part track|e2e --sdk
 * ours|posthog|segment`), run in turns across the SDKs, so RSS and JIT state never leak from one
 * SDK or figure to the next, and a spell of load on the machine falls on all of them:
 * - track: µs per call of 9,000 calls in one synchronous loop, each SDK with its defaults and a
 *   real endpoint (the sink), so whatever network work a call starts lands in the loop. Median of
 *   RUNS loops, each after the previous one was flushed; then the median of SETTLED more loops:
 *   in the first ones V8 is still growing its young generation, and each loop pays for the new
 *   pages it touches (`faults`: minor page faults per loop), a cost of a fresh process, not of
 *   a call.
 * - e2e: 20,000 events produced in chunks of 500 with a setImmediate between chunks, then a flush.
 *   CPU time of the client process from the first call to the end of the flush, divided by the
 *   events the sink received (unique ids); peak RSS is the process's VmHWM. Ours paces itself on
 *   `stats()` so it stays under its own `maxQueueSize` (what a caller does with our client); the
 *   peers have no such signal, so they run as they are (PostHog drops past its 1,000-message queue,
 *   as its users would see).
 * - the e2e defaults again with `node --max-semi-space-size=4` (a smaller young generation), for
 *   the peak RSS it leaves.
 * - floor (`--part floor --per N`): the same batches pre-built and posted through bare `node:http`,
 *   no SDK: the CPU per event below which no client sending through `node:http` can go.
 * By hand, `--events N` runs the e2e and floor parts with N events instead of 20,000 (how the CPU
 * per event falls as a process warms up); both parts also print user and system CPU time and the
 * minor page faults taken while measured.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { log, makeEvent, median, runJsonChild } from './support.mjs'

const SELF = fileURLToPath(import.meta.url)
const HERE = path.dirname(SELF)
const ROOT = path.resolve(HERE, '..')
const DIST = process.env.BENCH_DIST ?? path.join(ROOT, 'dist', 'index.js')
const SDKS = ['ours', 'posthog', 'segment']
const NAMES = { ours: 'isomorphic-analytics', posthog: 'posthog-node', segment: '@segment/analytics-node' }
const TRACK_CALLS = 9_000
const E2E_EVENTS = 20_000
const SEMI_SPACE_FLAG = '--max-semi-space-size=4'
/** Fresh processes per figure: the figure is their median (one process alone varies by ±5–8 %). */
const PROCESSES = 3

function ensurePeers() {
  if (existsSync(path.join(HERE, 'node_modules', 'posthog-node')) && existsSync(path.join(HERE, 'node_modules', '@segment', 'analytics-node'))) return
  log('peers: installing bench/ dependencies (npm ci)')
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: ['ignore', 'inherit', 'inherit'] })
}

function version(sdk) {
  const file = sdk === 'ours' ? path.join(ROOT, 'package.json') : path.join(HERE, 'node_modules', NAMES[sdk], 'package.json')
  return JSON.parse(readFileSync(file, 'utf8')).version
}

// ---------------------------------------------------------------------------------------------
// One adapter per SDK: create with defaults (+ flushAt), track one of our inputs, flush, close.

async function adapter(sdk, url, flushAt) {
  if (sdk === 'ours') {
    const { Client } = await import(pathToFileURL(DIST).href)
    const client = new Client('bench-key', { endpoint: url, ...(flushAt && { flushAt }) })
    return {
      track: (e) => client.track(e),
      flush: () => client.flush(),
      close: () => client.close(),
      held: () => {
        const s = client.stats()
        return s.queued + s.inFlight
      },
      capacity: 10_000,
    }
  }
  if (sdk === 'posthog') {
    const { PostHog } = resolvePeer('posthog-node')
    const client = new PostHog('phc_bench_key', { host: url, ...(flushAt && { flushAt }) })
    return {
      track: (e) => client.capture({ distinctId: e.userId, event: e.event, properties: e.properties }),
      flush: () => client.flush(),
      close: () => client.shutdown(),
    }
  }
  const { Analytics } = resolvePeer('@segment/analytics-node')
  const client = new Analytics({ writeKey: 'bench-key', host: url, ...(flushAt && { flushAt }) })
  return {
    track: (e) => client.track(e),
    // Segment's only way to wait for delivery is closeAndFlush(); the client cannot be used after.
    flush: () => client.closeAndFlush({ timeout: 120_000 }),
    close: () => client.closeAndFlush({ timeout: 120_000 }),
  }
}

/** Minor page faults of this process so far (/proc/self/stat): pages it touched for the first time. */
const minorFaults = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7])

/** A peer as `require(name)` from bench/ resolves it (Segment's ESM build does not load in Node as is). */
const resolvePeer = (name) => createRequire(path.join(HERE, 'package.json'))(name)

// ---------------------------------------------------------------------------------------------
// Parts, each in its own child

async function partTrack(sdk) {
  const { spawnSink } = await import('./sink.mjs')
  const sink = await spawnSink()
  const POOL = 1024
  const inputs = Array.from({ length: POOL }, (_, i) => makeEvent(i))
  const RUNS = 5
  // Then as many more: by then V8 has grown its young generation to its size (up to 32 MiB on
  // Node 20, growing while objects survive), and a loop no longer pays for its first pages.
  const SETTLED = 5
  const perCall = []
  const settled = []
  const faults = []
  // Process CPU time of the same loops: on a loaded machine wall time also counts time the thread
  // was not scheduled; CPU time does not (it does include V8's GC helper threads).
  const cpuPerCall = []
  let check = 0
  // A fresh client per loop (Segment's cannot be reused after closeAndFlush); loop 0 warms the JIT.
  for (let run = 0; run < RUNS + SETTLED + 1; run++) {
    const client = await adapter(sdk, sink.url)
    const f0 = minorFaults()
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < TRACK_CALLS; i++) check ^= client.track(inputs[i & (POOL - 1)]) === undefined ? 1 : 2
    const ns = Number(process.hrtime.bigint() - t0) / TRACK_CALLS
    const c = process.cpuUsage(c0)
    if (run > 0) faults.push(minorFaults() - f0)
    if (run > RUNS) settled.push(ns)
    else if (run > 0) {
      perCall.push(ns)
      cpuPerCall.push(((c.user + c.system) * 1000) / TRACK_CALLS)
    }
    await client.flush()
    await client.close()
  }
  await sink.stop()
  return {
    usPerCall: median(perCall) / 1000,
    cpuUsPerCall: median(cpuPerCall) / 1000,
    settledUsPerCall: median(settled) / 1000,
    runs: perCall.map((ns) => ns / 1000),
    settledRuns: settled.map((ns) => ns / 1000),
    faults,
    check,
  }
}

async function partE2E(sdk, flushAt, events = E2E_EVENTS) {
  const { spawnSink } = await import('./sink.mjs')
  const sink = await spawnSink()
  const client = await adapter(sdk, sink.url, flushAt)
  const POOL = 1024
  const inputs = Array.from({ length: POOL }, (_, i) => makeEvent(i))
  const CHUNK = 500
  const cpu0 = process.cpuUsage()
  const faults0 = minorFaults()
  const t0 = performance.now()
  let sent = 0
  while (sent < events) {
    const chunk = Math.min(CHUNK, events - sent)
    if (client.held && client.held() + chunk > client.capacity) {
      await new Promise((r) => setTimeout(r, 1))
      continue
    }
    for (let k = 0; k < chunk; k++, sent++) client.track(inputs[sent & (POOL - 1)])
    await new Promise((r) => setImmediate(r))
  }
  await client.flush()
  const cpu = process.cpuUsage(cpu0)
  const faults = minorFaults() - faults0
  const wallMs = performance.now() - t0
  await client.close()
  const vmHwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
  const stats = await sink.stats()
  await sink.stop()
  return { cpuUs: cpu.user + cpu.system, userUs: cpu.user, systemUs: cpu.system, minorFaults: faults, wallMs, delivered: stats.unique, requests: stats.requests, vmHwm }
}

/**
 * For scale, the transport alone: the same events as ours sends them (stamped, serialised and
 * joined into `{"batch":[…]}` bodies of `per` messages, all built before the clock starts),
 * posted through `node:http` with a keep-alive agent, 8 in flight (our default), from a fresh
 * process to the same sink. No SDK can deliver for less CPU through `node:http` than this.
 */
async function partFloor(per, events = E2E_EVENTS) {
  const { cpuPerRequest, nodeHttpPoster } = await import('./transport.mjs')
  const { spawnSink } = await import('./sink.mjs')
  const sink = await spawnSink()
  const context = { library: { name: 'isomorphic-analytics', version: version('ours') } }
  const messages = Array.from({ length: events }, (_, i) =>
    JSON.stringify({ ...makeEvent(i), type: 'track', context, messageId: crypto.randomUUID(), timestamp: new Date().toISOString() }))
  const bodies = []
  for (let i = 0; i < events; i += per) bodies.push(`{"batch":[${messages.slice(i, i + per).join(',')}],"sentAt":"${new Date().toISOString()}"}`)
  const lengths = bodies.map((body) => Buffer.byteLength(body))
  const post = nodeHttpPoster(new URL('/v1/batch', sink.url))
  const cpu0 = process.cpuUsage()
  const faults0 = minorFaults()
  await cpuPerRequest((i) => post(bodies[i], lengths[i]), bodies.length)
  const cpu = process.cpuUsage(cpu0)
  const faults = minorFaults() - faults0
  post.close()
  const stats = await sink.stats()
  await sink.stop()
  return { cpuUs: cpu.user + cpu.system, userUs: cpu.user, systemUs: cpu.system, minorFaults: faults, delivered: stats.unique, requests: stats.requests }
}

// ---------------------------------------------------------------------------------------------

export async function run() {
  ensurePeers()
  const rows = []
  const label = (sdk) => `${NAMES[sdk]} ${version(sdk)}`
  const target = (sdk, t) => (sdk === 'ours' ? t : '')

  // Each figure is the median of PROCESSES fresh processes, run in turns (ours, PostHog, Segment,
  // ours, …), so a spell of load on the machine falls on every SDK alike.
  const inTurns = async (each) => {
    const runs = Object.fromEntries(SDKS.map((sdk) => [sdk, []]))
    for (let turn = 0; turn < PROCESSES; turn++) for (const sdk of SDKS) runs[sdk].push(await each(sdk))
    return runs
  }
  const middle = (runs, figure) => median(runs.map(figure))
  const tracks = await inTurns(async (sdk) => {
    log(`peers: track() ×${TRACK_CALLS}, ${sdk}`)
    const t = await runJsonChild(SELF, ['--part', 'track', '--sdk', sdk])
    log(`peers: ${sdk} runs (µs/call): ${t.runs.map((x) => x.toFixed(2)).join(' ')}; settled: ${t.settledRuns.map((x) => x.toFixed(2)).join(' ')}; page faults per loop: ${t.faults.join(' ')}`)
    return t
  })
  for (const sdk of SDKS) {
    const t = tracks[sdk]
    rows.push({ name: `track() µs/call, ${TRACK_CALLS} calls in one sync loop: ${label(sdk)}`, value: +middle(t, (r) => r.usPerCall).toFixed(2), unit: 'µs', target: target(sdk, '≤ 3') })
    rows.push({ name: `  the same, process CPU time: ${label(sdk)}`, value: +middle(t, (r) => r.cpuUsPerCall).toFixed(2), unit: 'µs', target: '' })
    rows.push({ name: `  the same, loops 6–10 (young generation grown): ${label(sdk)}`, value: +middle(t, (r) => r.settledUsPerCall).toFixed(2), unit: 'µs', target: '' })
  }
  const perEvent = (e) => e.cpuUs / Math.max(1, e.delivered)
  for (const flushAt of [undefined, 100]) {
    const what = flushAt ? `flushAt ${flushAt}` : 'defaults'
    const e2e = await inTurns(async (sdk) => {
      log(`peers: e2e ${E2E_EVENTS} events, ${what}, ${sdk}`)
      const e = await runJsonChild(SELF, ['--part', 'e2e', '--sdk', sdk, ...(flushAt ? ['--flush-at', String(flushAt)] : [])], { timeoutMs: 300_000 })
      log(`peers: ${sdk} ${what}: ${JSON.stringify(e)}`)
      return e
    })
    for (const sdk of SDKS) {
      const runs = e2e[sdk]
      const cpu = middle(runs, perEvent)
      // Messages lost: as the run of the median figure lost them.
      const lost = E2E_EVENTS - runs.find((e) => perEvent(e) === cpu).delivered
      const note = lost > 0 ? ` (lost ${((100 * lost) / E2E_EVENTS).toFixed(0)} %)` : ''
      rows.push({
        name: `CPU µs per delivered event, ${E2E_EVENTS} events, ${what}: ${label(sdk)}${note}`,
        value: +cpu.toFixed(1),
        unit: 'µs',
        target: target(sdk, flushAt ? '≤ 10' : '≤ 20'),
      })
      if (!flushAt) {
        rows.push({ name: `peak RSS (VmHWM), ${E2E_EVENTS} events, defaults: ${label(sdk)}`, value: +(middle(runs, (e) => e.vmHwm) / 2 ** 20).toFixed(1), unit: 'MiB', target: target(sdk, '≤ 90') })
      }
    }
    if (!flushAt) {
      // Most of the peak is V8's young generation (up to 16 MiB semi-spaces on Node 20): what the
      // same run peaks at with smaller ones, a flag of the application's, not of any SDK's.
      const small = await inTurns(async (sdk) => {
        const e = await runJsonChild(SELF, ['--part', 'e2e', '--sdk', sdk], { nodeArgs: [SEMI_SPACE_FLAG], timeoutMs: 300_000 })
        log(`peers: ${sdk} defaults, ${SEMI_SPACE_FLAG}: ${JSON.stringify(e)}`)
        return e
      })
      for (const sdk of SDKS) {
        rows.push({ name: `peak RSS (VmHWM), ${E2E_EVENTS} events, defaults, node ${SEMI_SPACE_FLAG}: ${label(sdk)}`, value: +(middle(small[sdk], (e) => e.vmHwm) / 2 ** 20).toFixed(1), unit: 'MiB', target: '' })
      }
    }
    const floors = []
    for (let turn = 0; turn < PROCESSES; turn++) {
      const floor = await runJsonChild(SELF, ['--part', 'floor', '--per', String(flushAt ?? 20)], { timeoutMs: 300_000 })
      log(`peers: bare node:http, ${what}: ${JSON.stringify(floor)}`)
      floors.push(floor)
    }
    rows.push({
      name: `CPU µs per delivered event, ${E2E_EVENTS} events, ${what}: node:http ${process.versions.node} (no SDK)`,
      value: +middle(floors, perEvent).toFixed(1),
      unit: 'µs',
      target: '',
    })
  }
  // The peers table of docs/performance.md (see bench/run.mjs): a line per figure, a column per SDK, notes apart.
  return rows.map((row) => {
    const [, figure, sdk, note] = /^\s*(.+): (\S+ \d[\w.-]*)(?: \((.+)\))?$/.exec(row.name) ?? []
    return figure ? { ...row, group: figure, column: sdk, ...(note && { note }) } : row
  })
}

if (process.argv[1] === SELF) {
  const argv = process.argv.slice(2)
  const arg = (name) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined)
  const part = arg('--part')
  const events = arg('--events') ? Number(arg('--events')) : undefined
  if (part === 'track') {
    process.stdout.write(`${JSON.stringify(await partTrack(arg('--sdk')))}\n`)
    process.exit(0)
  } else if (part === 'floor') {
    process.stdout.write(`${JSON.stringify(await partFloor(Number(arg('--per')), events))}\n`)
    process.exit(0)
  } else if (part === 'e2e') {
    const flushAt = arg('--flush-at') ? Number(arg('--flush-at')) : undefined
    process.stdout.write(`${JSON.stringify(await partE2E(arg('--sdk'), flushAt, events))}\n`)
    process.exit(0)
  } else {
    const rows = await run()
    for (const r of rows) console.log(`${r.name.padEnd(96)} ${String(r.value).padStart(8)} ${r.unit.padEnd(4)} ${r.target}`)
  }
}
