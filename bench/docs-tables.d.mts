import type { BenchResults } from './results.mjs'

export interface DocsTable {
  id: string
  modules: string[]
  first: string
}
export const TABLES: DocsTable[]
export function tableText(results: BenchResults, table: DocsTable): string
export function withTables(page: string, results: BenchResults): string
export function writeTables(): string
