import { describe, expect, it } from 'vitest'
import { tableText } from '../../bench/docs-tables.mjs'
import { mergeRun, type BenchResults, type BenchRun } from '../../bench/results.mjs'

const run = (module: string, date: string, load = 1): BenchRun => ({
  module,
  date,
  version: '0.1.0',
  commit: 'abc1234',
  node: 'v20.20.2',
  cpu: 'Test CPU',
  cores: 2,
  loadavg: { start: [load, 0, 0], end: [load + 1, 0, 0] },
  seconds: 30,
})
const row = (name: string, value: number, extra: Record<string, string> = {}) => ({ name, value, unit: 'µs', target: '≤ 3', ...extra })
const empty: BenchResults = { runs: {}, rows: [] }
const MODULES = ['client', 'peers', 'durable']

describe('bench/results.json', () => {
  it('a partial run replaces only its own module, in place, and keeps the others with their runs', () => {
    let results = mergeRun(empty, run('client', 'D1'), [row('track()', 5), row('import', 7)], MODULES)
    results = mergeRun(results, run('durable', 'D1'), [row('x: a', 1, { group: 'x' })], MODULES)
    results = mergeRun(results, run('peers', 'D2'), [row('f: ours', 2, { group: 'f', column: 'ours' })], MODULES)
    expect(results.rows.map((r) => r.module)).toEqual(['client', 'client', 'peers', 'durable'])

    const again = mergeRun(results, run('client', 'D3'), [row('track() renamed', 4)], MODULES)
    expect(again.rows.map((r) => [r.module, r.name, r.run])).toEqual([
      ['client', 'track() renamed', 'client@D3'],
      ['peers', 'f: ours', 'peers@D2'],
      ['durable', 'x: a', 'durable@D1'],
    ])
    expect(Object.keys(again.runs).sort()).toEqual(['client@D3', 'durable@D1', 'peers@D2'])
    expect(results.rows).toHaveLength(4) // the input is not changed
  })

  it('rows with a group are replaced group by group (one durable mode), new groups after the module', () => {
    let results = mergeRun(empty, run('durable', 'D1'), [row('memory: a', 1, { group: 'memory' }), row('Redis: a', 2, { group: 'Redis' })], MODULES)
    results = mergeRun(results, run('durable', 'D2'), [row('Redis: a', 3, { group: 'Redis' }), row('PostgreSQL: a', 4, { group: 'PostgreSQL' })], MODULES)
    expect(results.rows.map((r) => [r.group, r.value, r.run])).toEqual([
      ['memory', 1, 'durable@D1'],
      ['Redis', 3, 'durable@D2'],
      ['PostgreSQL', 4, 'durable@D2'],
    ])
  })
})

describe('bench/docs-tables.mjs', () => {
  it('grouped rows make a grid (a line per group, a column per column, the targets last); others a list', () => {
    const results = mergeRun(empty, run('peers', '2026-11-23T10:00:00Z', 3), [
      row('track(): ours 1.0', 5.25, { group: 'track()', column: 'ours 1.0' }),
      { ...row('track(): peer 2.0', 9, { group: 'track()', column: 'peer 2.0', note: 'lost 4 %' }), target: '' },
      { name: 'RSS: ours 1.0', value: 120000, unit: 'MiB', target: '≤ 90', group: 'RSS', column: 'ours 1.0' },
    ])
    expect(tableText(results, { id: 'peers', modules: ['peers'], first: 'figure' })).toBe(
      [
        '| figure | ours 1.0 | peer 2.0 | target |',
        '|---|--:|--:|---|',
        '| track() | 5.25 µs ✗ | 9 µs (lost 4 %) | ≤ 3 µs |',
        '| RSS | 120,000 MiB ✗ | — | ≤ 90 MiB |',
        '',
        'Measured by `npm run bench` (saved in `bench/results.json`) on a 2-core Test CPU, Node 20.20.2; peers: 2026-11-23 10:00 UTC, 30 s, load average 3 → 4 (1-minute load average at the start and the end).',
        '',
      ].join('\n'),
    )
    const list = mergeRun(empty, run('client', '2026-11-23T11:00:00Z'), [row('track() per call', 2.5), { name: 'requests', value: 5000, unit: 'req', target: '' }])
    expect(tableText(list, { id: 'performance', modules: ['client'], first: 'benchmark' })).toContain(
      ['| benchmark | result | target |', '|---|--:|---|', '| **client** (`bench/client.mjs`) |  |  |', '| track() per call | 2.5 µs | ≤ 3 µs ✓ |', '| requests | 5,000 req |  |'].join('\n'),
    )
  })
})
