#!/usr/bin/env node
/**
 * `npm run bench`: runs each bench module in its own child process (so RSS and JIT state do not
 * leak from one to the next), collects its rows `{ name, value, unit, target }` and prints one
 * table. Reports, does not gate: exits 0 when a target is missed, 1 when a bench crashes.
 *
 * A module is any file below that exists and exports `async function run()` returning rows.
 * The child (this file with `--child <module>`: no extra node flags, so modules that fork inherit a
 * clean execArgv) imports it, calls run(), and writes the rows as JSON to fd 3, so whatever the
 * module prints on stdout/stderr is shown as progress and never mixed with the result.
 *   BENCH_ONLY=client,faults   run a subset
 *   BENCH_TIMEOUT_S=900        per-module time limit (then it counts as crashed)
 *   --docs                     then write the tables of docs/performance.md (bench/docs-tables.mjs)
 *   --no-save                  do not save the results (a trial run)
 *
 * Each module's rows are saved to bench/results.json as soon as it finishes (bench/results.mjs:
 * merged with the saved ones, so a subset updates only its rows), with the date, machine, Node
 * version and the load average before and after it. A module that crashes saves nothing.
 *
 * Besides name, value, unit and target, a row may carry fields for the docs' tables:
 *   group    rows of a module with the same group are one line of its table (durable: one mode
 *            and process count; peers: one figure), and a partial run replaces whole groups;
 *   column   the column of that line the row fills (peers: the SDK); default: the name after
 *            "<group>: ";
 *   note     a few words shown after the value (peers: "lost 44 %").
 *
 * The build under test is frozen first: dist/ is copied to .tmp/bench-<pid>/dist (git-ignored; its
 * imports still resolve from the repo's node_modules) and BENCH_DIST names its index.js for the
 * children. So a rebuild of dist/ while the benches run (another `npm test` cleans the folder)
 * cannot crash them or mix two builds. Modules that import ../dist directly still see the live one.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cpSync, existsSync, readFileSync, rmSync, writeSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { MODULES, check, mergeRun, readResults, writeResults } from './results.mjs'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(HERE, '..')

function runModule(file, timeoutMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', file], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'pipe'],
    })
    let out = ''
    child.stdio[3].on('data', (d) => (out += d))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (timedOut) return resolve({ error: `timed out after ${timeoutMs / 1000} s` })
      if (code !== 0) return resolve({ error: `exited with ${code ?? signal}` })
      try {
        resolve({ rows: JSON.parse(out) })
      } catch {
        resolve({ error: 'no rows on fd 3' })
      }
    })
  })
}

function table(rows) {
  const head = ['bench', 'name', 'value', 'unit', 'target', 'ok?']
  const cells = rows.map((r) => [r.bench, r.name, r.value, r.unit, r.target, r.ok].map((c) => String(c ?? '')))
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)))
  const line = (c) => c.map((x, i) => (i === 2 ? x.padStart(widths[i]) : x.padEnd(widths[i]))).join(' | ')
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...cells.map(line)].join('\n')
}

if (process.argv[2] === '--child') {
  const mod = await import(pathToFileURL(process.argv[3]).href)
  if (typeof mod.run !== 'function') throw new Error(`${process.argv[3]}: no exported run()`)
  const rows = await mod.run()
  if (!Array.isArray(rows)) throw new Error(`${process.argv[3]}: run() did not return an array of rows`)
  writeSync(3, JSON.stringify(rows))
  process.exit(0)
}

function snapshotDist() {
  const dir = path.join(ROOT, '.tmp', `bench-${process.pid}`)
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      rmSync(dir, { recursive: true, force: true })
      cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true })
      const index = path.join(dir, 'dist', 'index.js')
      if (existsSync(index)) return { dir, index }
    } catch {}
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000) // a concurrent build is mid-way
  }
  throw new Error('dist/index.js not found: run `npm run build`')
}

const snapshot = process.env.BENCH_DIST ? undefined : snapshotDist()
if (snapshot) process.env.BENCH_DIST = snapshot.index
process.on('exit', () => snapshot && rmSync(snapshot.dir, { recursive: true, force: true }))

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean)
const unknown = only?.filter((name) => !MODULES.includes(name)) ?? []
if (unknown.length) {
  console.error(`BENCH_ONLY: no bench module named ${unknown.join(', ')} (the modules: ${MODULES.join(', ')})`)
  process.exit(1)
}
const save = !process.argv.includes('--no-save')
const timeoutMs = Number(process.env.BENCH_TIMEOUT_S ?? 900) * 1000
const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version
const load = () => os.loadavg().map((x) => +x.toFixed(2))

/** The commit under test, marked when src/ has changes it does not hold; '' outside git. */
function commit() {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    return changed ? `${head}+changes` : head
  } catch {
    return ''
  }
}

const all = []
const crashed = []
const t0 = performance.now()
for (const name of MODULES) {
  if (only && !only.includes(name)) continue
  const file = path.join(HERE, `${name}.mjs`)
  if (!existsSync(file)) continue
  console.error(`[bench] ── ${name} ── load avg ${load().join(' ')}`)
  const run = { module: name, date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), version, commit: commit(), node: process.version, cpu: os.cpus()[0]?.model.trim() ?? '', cores: os.cpus().length, loadavg: { start: load() } }
  const started = performance.now()
  const result = await runModule(file, timeoutMs)
  run.loadavg.end = load()
  run.seconds = Math.round((performance.now() - started) / 1000)
  console.error(`[bench] ${name}: ${run.seconds} s, load avg ${run.loadavg.end.join(' ')}`)
  if (result.error) {
    crashed.push(name)
    all.push({ bench: name, name: `CRASHED: ${result.error}`, value: '', unit: '', target: '', ok: 'CRASH' })
    continue
  }
  const rows = result.rows.map((r) => ({ ...r, name: String(r.name), unit: r.unit ?? '', target: r.target ?? '' }))
  for (const r of rows) all.push({ bench: name, name: r.name, value: r.value, unit: r.unit, target: r.target, ok: check(r.value, r.target) })
  if (save) writeResults(mergeRun(readResults(), run, rows))
}

console.log(`\nisomorphic-analytics ${version} · node ${process.version} · ${os.cpus().length} CPU ${os.cpus()[0]?.model ?? ''} · load avg ${load().join(' ')} · ${((performance.now() - t0) / 1000).toFixed(0)} s\n`)
console.log(table(all))
const missed = all.filter((r) => r.ok === 'MISS').length
console.log(`\n${missed} target(s) missed${crashed.length ? `; crashed: ${crashed.join(', ')} (their saved rows are left as they were)` : ''}`)
if (save) console.log(`saved to bench/results.json${process.argv.includes('--docs') ? '' : '; `node bench/docs-tables.mjs` writes them into docs/performance.md'}`)
if (process.argv.includes('--docs')) console.log((await import('./docs-tables.mjs')).writeTables())
process.exit(crashed.length ? 1 : 0)
