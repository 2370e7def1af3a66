export interface BenchRow {
  module: string
  run: string
  name: string
  value: number | string
  unit: string
  target: string
  group?: string
  column?: string
  note?: string
}
export interface BenchRun {
  module: string
  date: string
  version: string
  commit: string
  node: string
  cpu: string
  cores: number
  loadavg: { start: number[]; end: number[] }
  seconds: number
}
export interface BenchResults {
  runs: Record<string, BenchRun>
  rows: BenchRow[]
}
export const MODULES: string[]
export const RESULTS_FILE: URL
export function check(value: unknown, target: unknown): 'ok' | 'MISS' | ''
export function readResults(file?: URL | string): BenchResults
export function writeResults(results: BenchResults, file?: URL | string): void
export function mergeRun(
  results: BenchResults,
  run: BenchRun,
  rows: Array<Omit<BenchRow, 'module' | 'run'>>,
  modules?: string[],
): BenchResults
