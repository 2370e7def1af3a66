#!/usr/bin/env node
/**
 * Writes the tables of docs/performance.md from bench/results.json (what `npm run bench` measured
 * last), between generated markers (scripts/generated-blocks.mjs). No benchmark runs here.
 *
 *   node bench/docs-tables.mjs     rewrite docs/performance.md's tables from bench/results.json
 *   npm run bench -- --docs        measure, save, then the same
 *
 * The layout comes from the rows, not from this file: each table takes the rows of its modules;
 * rows that carry a `group` (see bench/run.mjs) make a grid, a line per group and a column per
 * `column`, with the targets of the line at its end; other rows make a list, one line per row
 * under a heading line per module. Each table ends with when, where and under what load its
 * figures were measured. test/docs/docs.test.ts fails when docs/performance.md differs from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { withGenerated } from '../scripts/generated-blocks.mjs'
import { MODULES, check, readResults } from './results.mjs'

const PAGE = new URL('../docs/performance.md', import.meta.url)

/** Modules with a table of their own, and what its first column says. */
const OWN = [
  { id: 'peers', modules: ['peers'], first: 'figure' },
  { id: 'durable', modules: ['durable'], first: 'mode, processes' },
]
/** The page's generated blocks: the main table takes every module the others do not. */
export const TABLES = [{ id: 'performance', modules: MODULES.filter((m) => !OWN.some((t) => t.modules.includes(m))), first: 'benchmark' }, ...OWN]

const number = (value) => (typeof value === 'number' ? value.toLocaleString('en-US', { maximumFractionDigits: 3 }) : String(value ?? ''))
/** '≥ 50000' → '≥ 50,000', as the values are shown. */
const targetText = (target) => String(target ?? '').replace(/\d{4,}(?:\.\d+)?/g, (n) => number(Number(n)))
const withUnit = (text, unit) => (!unit || !text || text === '—' ? text : unit === '×' ? `${text}×` : `${text} ${unit}`)
const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** The value as the table shows it: number, unit, note, and ✗ when it misses its target. */
function result(row) {
  const note = row.note ? ` (${row.note})` : ''
  const missed = check(row.value, row.target) === 'MISS' ? ' ✗' : ''
  return `${withUnit(number(row.value), row.unit)}${note}${missed}`
}

/** A target with its unit, and ✓ / ✗ when it can be checked. */
function target(row) {
  const text = withUnit(targetText(row.target), row.unit)
  const ok = check(row.value, row.target)
  return ok ? `${text} ${ok === 'ok' ? '✓' : '✗'}` : text
}

const markdown = (header, lines, align) =>
  [`| ${header.map(cell).join(' | ')} |`, `|${align.map((a) => (a === 'right' ? '--:' : '---')).join('|')}|`, ...lines.map((l) => `| ${l.map(cell).join(' | ')} |`)].join('\n')

/** One line per row, a heading line per module. */
function list(rows, first) {
  const lines = []
  for (const module of new Set(rows.map((r) => r.module))) {
    lines.push([`**${module}** (\`bench/${module}.mjs\`)`, '', ''])
    for (const row of rows.filter((r) => r.module === module)) lines.push([row.name, result({ ...row, target: '' }), target(row)])
  }
  return markdown([first, 'result', 'target'], lines, ['left', 'right', 'left'])
}

const columnOf = (row) => row.column ?? (row.name.startsWith(`${row.group}: `) ? row.name.slice(row.group.length + 2) : row.name)

/** A line per group, a column per `column`; the line's targets last (each with its unit). */
function grid(rows, first) {
  const groups = [...new Set(rows.map((r) => r.group))]
  const columns = [...new Set(rows.map(columnOf))]
  const lines = groups.map((group) => {
    const of = rows.filter((r) => r.group === group)
    const cells = columns.map((column) => {
      const row = of.find((r) => columnOf(r) === column)
      return row ? result(row) : '—'
    })
    const targets = [...new Set(of.filter((r) => r.target && r.target !== '—').map((r) => withUnit(targetText(r.target), r.unit)))]
    return [group, ...cells, targets.join(', ')]
  })
  return markdown([first, ...columns, 'target'], lines, ['left', ...columns.map(() => 'right'), 'left'])
}

const day = (date) => date.slice(0, 10)
const time = (date) => date.slice(11, 16)
const load = (run) => `${run.loadavg.start[0]} → ${run.loadavg.end[0]}`

/** When, on what, under what load: the machine once when all runs share it, then each run. */
function provenance(runs) {
  const machine = (run) => `${run.cores}-core ${run.cpu}, Node ${run.node.replace(/^v/, '')}`
  const machines = [...new Set(runs.map(machine))]
  const head = `Measured by \`npm run bench\` (saved in \`bench/results.json\`)${machines.length === 1 ? ` on a ${machines[0]}` : ''}`
  const clause = (run) =>
    `${run.module}: ${day(run.date)} ${time(run.date)} UTC, ${run.seconds} s, load average ${load(run)}${machines.length > 1 ? `, ${machine(run)}` : ''}`
  if (runs.length === 1) return `${head}; ${clause(runs[0])} (1-minute load average at the start and the end).`
  return `${head}; 1-minute load average at the start and the end of each module:\n\n${runs.map((run) => `- ${clause(run)}`).join('\n')}`
}

/** The text of one generated block: the table and the line saying where its figures come from. */
export function tableText(results, table) {
  const rows = results.rows.filter((r) => table.modules.includes(r.module))
  if (rows.length === 0) return `No figures yet: \`BENCH_ONLY=${table.modules.join(',')} npm run bench -- --docs\` measures them.\n`
  const runs = [...new Set(rows.map((r) => r.run))].map((id) => results.runs[id])
  const body = rows.every((r) => r.group !== undefined) ? grid(rows, table.first) : list(rows, table.first)
  return `${body}\n\n${provenance(runs)}\n`
}

/** `page` with every table written from `results`. */
export function withTables(page, results) {
  return TABLES.reduce((text, table) => withGenerated(text, table.id, tableText(results, table)), page)
}

/** Rewrites docs/performance.md from bench/results.json; returns what it did, in one line. */
export function writeTables() {
  const before = readFileSync(PAGE, 'utf8')
  const after = withTables(before, readResults())
  if (after === before) return 'docs/performance.md: tables already current'
  writeFileSync(PAGE, after)
  return `docs/performance.md: tables written from bench/results.json (${TABLES.map((t) => t.id).join(', ')})`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(writeTables())
