#!/usr/bin/env node
/**
 * Issue 5 targets: delivery under faults, default client options except `endpoint`.
 *   no-fault  100,000 events, plain sink (the RSS baseline, same producer and id bookkeeping)
 *   (a)       100,000 events, sink answers 30 % 500s and resets 2 % of sockets
 *   (b)       as (a), and 5 % of requests hang for 15 s (the client's default timeout is 10 s)
 * Each run is a fresh child process (bench/client.mjs --part e2e): same backpressure-respecting
 * producer as the end-to-end bench (see partE2E in bench/client-e2e.mjs), plus every messageId
 * tracked and matched against the 'flush' events, the 'error' events and the sink's own list of ids.
 *
 * Run (b) cannot finish 100,000 events in a few minutes: every hung request holds one of the 8
 * connection slots for the 10 s timeout. So its producer stops after BENCH_HANG_BUDGET_S seconds
 * (default 30; BENCH_FULL=1 lifts the budget) and the rows say how many events were sent. The drain
 * is still measured from a full queue (maxQueueSize held), i.e. the state a 100k run ends in.
 *
 *   node bench/faults.mjs [--json]
 */
import { fileURLToPath } from 'node:url'
import { runE2E } from './client.mjs'
import { log } from './support.mjs'

const SELF = fileURLToPath(import.meta.url)
const EVENTS = 100_000
const full = process.env.BENCH_FULL === '1'
const hangBudgetMs = full ? 0 : Number(process.env.BENCH_HANG_BUDGET_S ?? 30) * 1000

const RUNS = [
  { key: 'no-fault', label: 'no faults', sink: {} },
  { key: 'a', label: '(a) 30% 500 + 2% reset', sink: { errorRate: 0.3, resetRate: 0.02, seed: 1 }, drainTarget: 5 },
  {
    key: 'b', label: '(b) (a) + 5% hang 15 s', sink: { errorRate: 0.3, resetRate: 0.02, hangRate: 0.05, hangMs: 15_000, seed: 2 },
    drainTarget: 10, wallLimitMs: hangBudgetMs,
  },
]

const pct = (x) => +(100 * x).toFixed(3)
const mib = (b) => b / 2 ** 20

export async function run() {
  const rows = []
  let baselineRss
  for (const spec of RUNS) {
    log(`faults: ${spec.label}${spec.wallLimitMs ? ` (producer budget ${spec.wallLimitMs / 1000} s)` : ''}`)
    const r = await runE2E({ events: EVENTS, trackIds: true, sink: spec.sink, wallLimitMs: spec.wallLimitMs || undefined }, 420_000)
    const rss = r.vmHwm ?? r.peakRssSampled
    const acc = r.accounting
    log(
      `faults: ${spec.key}: sent ${r.sent} in ${(r.wallMs / 1000).toFixed(1)} s (drain ${(r.drainMs / 1000).toFixed(1)} s: ${JSON.stringify(r.drain)}), ` +
        `cpu ${(r.cpuUs / r.sent).toFixed(1)} µs/ev, rss ${mib(rss).toFixed(0)} MiB, stats ${JSON.stringify(r.clientStats)}, ` +
        `flush() ${JSON.stringify(r.flushResult)}, fail reasons ${JSON.stringify(r.failReasons)} ${JSON.stringify(r.failSamples)}, retries by attempt ${JSON.stringify(r.retryHistogram)}, ` +
        `sink ${JSON.stringify({ ...r.sink, config: undefined })}, accounting ${JSON.stringify(acc)}, unhandled ${JSON.stringify(r.unhandled)}`,
    )
    if (spec.key === 'no-fault') {
      baselineRss = rss
      rows.push({ name: 'faults no-fault: peak RSS (baseline)', value: +mib(rss).toFixed(1), unit: 'MiB', target: '' })
      rows.push({ name: 'faults no-fault: accounted for', value: pct(acc.deliveredOrFailed / acc.tracked), unit: '%', target: '≥ 100' })
      continue
    }
    const p = spec.key
    const sentNote = r.sent < EVENTS ? ` [${r.sent} sent, ${Math.round(r.wallMs / 1000 - r.drainMs / 1000)} s budget]` : ''
    rows.push({ name: `faults ${p}: delivered or reported${sentNote}`, value: pct(acc.deliveredOrFailed / acc.tracked), unit: '%', target: '≥ 100' })
    rows.push({ name: `faults ${p}: lost (neither reported nor at sink)`, value: acc.lost, unit: 'msgs', target: '≤ 0' })
    rows.push({ name: `faults ${p}: unhandled rejections`, value: r.unhandled.count, unit: '', target: '≤ 0' })
    rows.push({ name: `faults ${p}: duplicates at sink / ${r.sent}`, value: pct(r.sink.duplicates / r.sent), unit: '%', target: '≤ 1' })
    rows.push({ name: `faults ${p}: drain (last track → flush)`, value: +(r.drainMs / 1000).toFixed(2), unit: 's', target: `≤ ${spec.drainTarget}` })
    rows.push({ name: `faults ${p}: peak RSS / no-fault`, value: +(rss / baselineRss).toFixed(2), unit: '×', target: '≤ 1.5' })
    rows.push({ name: `faults ${p}: failed for good (reported)`, value: r.failedReported, unit: 'msgs', target: '' })
    rows.push({ name: `faults ${p}: wall time (${Math.round(r.sent / (r.wallMs / 1000))} ev/s)`, value: +(r.wallMs / 1000).toFixed(1), unit: 's', target: '' })
  }
  return rows
}

if (process.argv[1] === SELF) {
  const rows = await run()
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(rows)}\n`)
  else for (const r of rows) console.log(`${r.name.padEnd(60)} ${String(r.value).padStart(10)} ${r.unit.padEnd(5)} ${r.target}`)
}
