/**
 * bench/results.json: what `npm run bench` measured last, module by module, committed so that the
 * tables of docs/performance.md (bench/docs-tables.mjs) are written from measurements, never by hand.
 *
 *   {
 *     "runs": { "<module>@<date>": { module, date, version, commit, node, cpu, cores,
 *                                    loadavg: { start: [1, 5, 15 min], end: [...] }, seconds } },
 *     "rows": [ { module, run: "<module>@<date>", name, value, unit, target, group?, column?, note? } ]
 *   }
 *
 * A run is one module in one `npm run bench`; each row names the run it came from, so a table
 * can say when, on what machine and under what load its figures were measured. Rows are merged:
 * a new run of a module replaces that module's rows of the same `group` (a row without one is in
 * the module's unnamed group), in place, so `BENCH_ONLY=client` (or durable's `BENCH_MODES=Redis`)
 * updates only what it measured and keeps the order of the tables' lines.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'

/** The bench modules (bench/<name>.mjs), in the order `npm run bench` runs and docs/performance.md lists them. */
export const MODULES = ['client', 'transport', 'peers', 'faults', 'webhooks', 'collector', 'tracking-plan', 'durable']

/** Where run.mjs saves and docs-tables.mjs reads. */
export const RESULTS_FILE = new URL('./results.json', import.meta.url)

/** 'ok' / 'MISS' / '' for a target like '≤ 3', '>= 2000', '< 1.5'. */
export function check(value, target) {
  const m = /^\s*(≤|≥|<=|>=|<|>|=)\s*(-?[\d.]+(?:e[+-]?\d+)?)/i.exec(String(target ?? ''))
  if (!m || typeof value !== 'number' || !Number.isFinite(value)) return ''
  const t = Number(m[2])
  const pass = { '≤': value <= t, '<=': value <= t, '≥': value >= t, '>=': value >= t, '<': value < t, '>': value > t, '=': value === t }[m[1]]
  return pass ? 'ok' : 'MISS'
}

/** The saved results, or an empty set when there are none yet. A malformed file is an error. */
export function readResults(file = RESULTS_FILE) {
  if (!existsSync(file)) return { runs: {}, rows: [] }
  const results = JSON.parse(readFileSync(file, 'utf8'))
  if (typeof results?.runs !== 'object' || !Array.isArray(results.rows)) {
    throw new Error(`${file instanceof URL ? file.pathname : file}: not a bench results file (expected { runs, rows })`)
  }
  for (const row of results.rows) {
    if (!results.runs[row.run]) throw new Error(`bench results: row "${row.name}" names run "${row.run}", which is not in runs`)
  }
  return results
}

export function writeResults(results, file = RESULTS_FILE) {
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`)
}

const groupOf = (row) => row.group ?? ''

/**
 * `results` with the rows of one module's run merged in (a new object; `results` is unchanged).
 * `modules` is the order modules are listed in, for a module seen the first time.
 */
export function mergeRun(results, run, rows, modules = MODULES) {
  const id = `${run.module}@${run.date}`
  const fresh = rows.map((row) => ({ module: run.module, run: id, ...row }))
  const groups = new Map()
  for (const row of fresh) groups.set(groupOf(row), [...(groups.get(groupOf(row)) ?? []), row])
  const merged = []
  for (const row of results.rows) {
    const replacement = row.module === run.module ? groups.get(groupOf(row)) : undefined
    if (!replacement) merged.push(row)
    else if (!replacement.placed) {
      replacement.placed = true
      merged.push(...replacement)
    }
  }
  // Groups the file did not have yet: after the module's other rows, or where the module goes.
  const unplaced = [...groups.values()].filter((g) => !g.placed).flat()
  if (unplaced.length) {
    const order = (module) => (modules.includes(module) ? modules.indexOf(module) : modules.length)
    let at = merged.findLastIndex((row) => row.module === run.module) + 1
    if (at === 0) at = merged.findIndex((row) => order(row.module) > order(run.module))
    merged.splice(at === -1 ? merged.length : at, 0, ...unplaced)
  }
  const runs = {}
  for (const row of merged) runs[row.run] ??= row.run === id ? { ...run } : results.runs[row.run]
  return { runs, rows: merged }
}
