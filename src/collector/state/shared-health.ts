/**
 * Endpoint health in the queue server, shared by every collector process on it: each URL's record
 * as JSON (../health/record.ts) in a Redis hash or a PostgreSQL table (./json-rows.ts). A process
 * merges its outcomes into a record in one step there: it reads the record, merges, and writes
 * only if the server still holds what it read (else it merges into what it holds now), so two
 * processes' failures add up and only one of them sees the URL become disabled. A change of
 * state (disabled, enabled) is told on the bus, record included, so every process's attempts
 * heed it at once.
 */
import type { HealthRecord } from '../health/record.js'
import type { HealthStore } from '../health/store.js'
import type { QueueBus } from './bus.js'
import { sharedRows, type Held } from './json-rows.js'

const HASH = 'isomorphic-analytics:health'
const TABLE = 'isomorphic_analytics_health'
const TOPIC = 'health'
/** Tries of one merge while other processes keep changing the same record. */
const TRIES = 20

const parse = (json: Held) => (json === undefined ? undefined : (JSON.parse(json) as HealthRecord))

export function queueHealth(bus: QueueBus): HealthStore {
  const open = sharedRows(bus, { hash: HASH, table: TABLE, key: 'endpoint', value: 'health' })
  return {
    async update(key, change) {
      const rows = await open()
      let held = await rows.read(key)
      for (let i = 0; i < TRIES; i++) {
        const before = parse(held)
        const after = change(before)
        const written = await rows.writeIf(key, JSON.stringify(after), held)
        if (written.kept) return { before, after }
        held = written.held
      }
      throw new Error(`the health record of an endpoint changed ${TRIES} times while this process merged into it`)
    },
    async readAll() {
      const all = await (await open()).readAll()
      return new Map(Object.entries(all).map(([key, json]) => [key, parse(json)!]))
    },
    announce: (key, record) => bus.publish(TOPIC, { key, record }, { now: true }),
    watch: (onChange) => bus.subscribe((topic, data) => {
      const notice = topic === TOPIC ? (data as { key?: unknown; record?: unknown } | null) : undefined
      if (typeof notice?.key === 'string' && typeof notice.record === 'object' && notice.record !== null) onChange(notice.key, notice.record as HealthRecord)
    }),
  }
}
