/**
 * What the shared state (./shared-state.ts) needs of its server, implemented by ./redis-store.ts
 * and ./postgres-store.ts: a module of its own, so neither imports the state that uses it.
 */

import type { KeptCounts, Letter } from '../replay/kept-jobs.js'

/** Both servers count the payloads kept for replay in the completed jobs (`KeptCounts`). */
export interface Store extends KeptCounts {
  write(deltas: ReadonlyMap<string, number>): Promise<void>
  read(): Promise<Record<string, number>>
  getMembers(key: string): Promise<string[] | undefined>
  setMembers(key: string, members: readonly string[]): Promise<void>
  /** The keys (distinct) this owner holds once done: newly claimed, or claimed by it before. */
  claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>>
  settle(marks: readonly Mark[], ttlMs: number): Promise<void>
  /** The payloads of `job` marked settled, each with the outcome its mark holds (not a letter for a mark of 0.1.0, which held none). */
  settledOf(job: string, count: number): Promise<Map<number, string>>
  forget(jobs: readonly JobSize[]): Promise<void>
  /** Takes the turn `key` for `owner` for `ttlMs`, unless another owner holds it: whether it did. */
  takeTurn(key: string, owner: string, ttlMs: number): Promise<boolean>
  /** Ends `owner`'s turn `key` (nothing if it is no longer its own). */
  endTurn(key: string, owner: string): Promise<void>
  close(): Promise<void>
}

/** A `batch` job (its key), one of its payloads (index in the job) and how it settled (see ../replay/kept-jobs.ts). */
export type Mark = readonly [job: string, index: number, outcome: Letter]
/** A `batch` job (its key) and its number of payloads. */
export type JobSize = readonly [job: string, count: number]
