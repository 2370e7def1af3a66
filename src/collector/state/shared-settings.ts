/**
 * The console's settings store in the queue server (kind `queue`), shared by every collector
 * process on it: each source's Webhooks settings as JSON, in a Redis hash or a PostgreSQL table,
 * shared secret included (whoever can read the queue server can read them; they are never
 * logged). Saving tells the other processes on the bus (the source's name only, never the
 * settings); each of them reads the source's settings from the server and applies them to its
 * next message.
 */
import type { SettingsStore } from '../console/settings.js'
import type { SourceWebhooksConfig } from '../config.js'
import type { BusConnection, QueueBus } from './bus.js'
import { createTables } from './drivers.js'

const HASH = 'isomorphic-analytics:settings'
const TABLE = 'isomorphic_analytics_settings'
const TOPIC = 'settings'

interface Rows {
  write(source: string, json: string): Promise<void>
  read(source: string): Promise<string | undefined>
  readAll(): Promise<Record<string, string>>
}

function rowsOf(connection: BusConnection): Rows {
  if (connection.kind === 'redis') {
    const { redis } = connection
    return {
      write: async (source, json) => void (await redis.hset(HASH, source, json)),
      read: async (source) => (await redis.hget(HASH, source)) ?? undefined,
      readAll: () => redis.hgetall(HASH),
    }
  }
  const { query } = connection
  return {
    write: async (source, json) => void (await query(
      `INSERT INTO ${TABLE} (source, webhooks) VALUES ($1, $2) ON CONFLICT (source) DO UPDATE SET webhooks = excluded.webhooks`,
      [source, json],
    )),
    read: async (source) => (await query<{ webhooks: string }>(`SELECT webhooks FROM ${TABLE} WHERE source = $1`, [source]))[0]?.webhooks,
    readAll: async () => Object.fromEntries((await query<{ source: string; webhooks: string }>(`SELECT source, webhooks FROM ${TABLE}`)).map((r) => [r.source, r.webhooks])),
  }
}

async function openRows(bus: QueueBus): Promise<Rows> {
  const connection = await bus.connection()
  if (connection.kind === 'postgres') {
    await createTables((sql) => connection.query(sql), [`CREATE TABLE IF NOT EXISTS ${TABLE} (source text PRIMARY KEY, webhooks text NOT NULL)`])
  }
  return rowsOf(connection)
}

const parse = (json: string) => JSON.parse(json) as SourceWebhooksConfig

export function queueSettings(bus: QueueBus, report: (error: unknown) => void): SettingsStore {
  let rows: Promise<Rows> | undefined
  const open = () => (rows ??= openRows(bus).catch((error: unknown) => {
    rows = undefined
    throw error
  }))
  return {
    kind: 'queue',
    durable: true,
    async save(source, webhooks) {
      await (await open()).write(source, JSON.stringify(webhooks))
      await bus.publish(TOPIC, { source }, { now: true })
      return true
    },
    async load() {
      const all = await (await open()).readAll()
      return Object.fromEntries(Object.entries(all).map(([source, json]) => [source, parse(json)]))
    },
    watch(onChange) {
      return bus.subscribe((topic, data) => {
        const source = topic === TOPIC ? (data as { source?: unknown } | null)?.source : undefined
        if (typeof source !== 'string') return
        open()
          .then((r) => r.read(source))
          .then((json) => json !== undefined && onChange(source, parse(json)))
          .catch((error: unknown) => report(new Error(`Could not read the console settings of source "${source}" from the queue server`, { cause: error })))
      })
    },
  }
}
