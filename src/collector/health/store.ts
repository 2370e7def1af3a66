/**
 * Where endpoint health records are kept: this process's memory, or the queue server
 * (../state/shared-health.ts), where every collector process on it merges into the same records.
 */
import type { HealthRecord } from './record.js'

export interface HealthStore {
  /** Replaces the record of `key` with `change(held)` in one step: what it held, and what it holds. */
  update(key: string, change: (held: HealthRecord | undefined) => HealthRecord): Promise<{ before: HealthRecord | undefined; after: HealthRecord }>
  /** Every record kept, by key. */
  readAll(): Promise<Map<string, HealthRecord>>
  /** Tells the other processes of a record that changed state (disabled, enabled). */
  announce?(key: string, record: HealthRecord): Promise<void>
  /** Calls `onChange` with what another process announced; returns what stops it. */
  watch?(onChange: (key: string, record: HealthRecord) => void): () => void
}

export function memoryHealth(): HealthStore {
  const records = new Map<string, HealthRecord>()
  return {
    update(key, change) {
      const before = records.get(key)
      const after = change(before)
      records.set(key, after)
      return Promise.resolve({ before, after })
    },
    readAll: () => Promise.resolve(new Map(records)),
  }
}
