import type { BenchResults } from './results.mjs'

export interface ReadmeTable {
  id: string
  modules: string[]
  first: string
}
export const TABLES: ReadmeTable[]
export function tableText(results: BenchResults, table: ReadmeTable): string
export function withTables(readme: string, results: BenchResults): string
export function writeReadme(): string
