/**
 * The console's settings store in the queue server (kind `queue`), shared by every collector
 * process on it: each source's Webhooks settings as JSON, in a Redis hash or a PostgreSQL table,
 * shared secret included (whoever can read the queue server can read them; they are never
 * logged). Saving tells the other processes on the bus (the source's name only, never the
 * settings); each of them reads the source's settings from the server and applies them to its
 * next message.
 *
 * A change sent with `If-Match` is kept only if the server still holds the settings this process
 * last had from it (`saveIf`), in one step there: a Lua script comparing the hash field (Redis),
 * an `UPDATE … WHERE webhooks = <previous>` or an `INSERT … ON CONFLICT DO NOTHING` (PostgreSQL).
 * So of two processes changing the same source from the same version, one wins, even before the
 * other has heard of it.
 */
import type { SavedIf, SettingsStore } from '../console/settings.js'
import type { SourceWebhooksConfig } from '../config.js'
import type { BusConnection, QueueBus } from './bus.js'
import { createTables } from './drivers.js'

const HASH = 'isomorphic-analytics:settings'
const TABLE = 'isomorphic_analytics_settings'
const TOPIC = 'settings'

/** The settings as the server holds them: their JSON, `undefined` for none. */
type Held = string | undefined

interface Rows {
  write(source: string, json: string): Promise<void>
  /** Writes `json` only if the server holds `expected` now; else resolves with what it holds. */
  writeIf(source: string, json: string, expected: Held): Promise<{ kept: true } | { kept: false; held: Held }>
  read(source: string): Promise<string | undefined>
  readAll(): Promise<Record<string, string>>
}

/** KEYS[1]: the hash; ARGV: source, the JSON expected ('' for none), the new JSON. */
const WRITE_IF = `local held = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if held ~= ARGV[2] then return {0, held} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return {1}`

function rowsOf(connection: BusConnection): Rows {
  if (connection.kind === 'redis') {
    const { redis } = connection
    return {
      write: async (source, json) => void (await redis.hset(HASH, source, json)),
      async writeIf(source, json, expected) {
        const [kept, held] = (await redis.eval(WRITE_IF, 1, HASH, source, expected ?? '', json)) as [number, string?]
        return kept === 1 ? { kept: true } : { kept: false, held: held === '' ? undefined : held }
      },
      read: async (source) => (await redis.hget(HASH, source)) ?? undefined,
      readAll: () => redis.hgetall(HASH),
    }
  }
  const { query } = connection
  const read = async (source: string) => (await query<{ webhooks: string }>(`SELECT webhooks FROM ${TABLE} WHERE source = $1`, [source]))[0]?.webhooks
  return {
    write: async (source, json) => void (await query(
      `INSERT INTO ${TABLE} (source, webhooks) VALUES ($1, $2) ON CONFLICT (source) DO UPDATE SET webhooks = excluded.webhooks`,
      [source, json],
    )),
    read,
    readAll: async () => Object.fromEntries((await query<{ source: string; webhooks: string }>(`SELECT source, webhooks FROM ${TABLE}`)).map((r) => [r.source, r.webhooks])),
    async writeIf(source, json, expected) {
      const written = expected === undefined
        ? await query(`INSERT INTO ${TABLE} (source, webhooks) VALUES ($1, $2) ON CONFLICT (source) DO NOTHING RETURNING source`, [source, json])
        : await query(`UPDATE ${TABLE} SET webhooks = $2 WHERE source = $1 AND webhooks = $3 RETURNING source`, [source, json, expected])
      return written.length === 1 ? { kept: true } : { kept: false, held: await read(source) }
    },
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
    // `previous` was parsed from (or written as) `JSON.stringify`'s text, which writing it again gives back.
    async saveIf(source, webhooks, previous): Promise<SavedIf> {
      const written = await (await open()).writeIf(source, JSON.stringify(webhooks), previous === undefined ? undefined : JSON.stringify(previous))
      if (!written.kept) return { kept: false, held: written.held === undefined ? undefined : parse(written.held) }
      await bus.publish(TOPIC, { source }, { now: true })
      return { kept: true, durable: true }
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
