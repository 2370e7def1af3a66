/**
 * JSON texts by key in the queue server, shared by every collector process on it: a Redis hash
 * (a field per key) or a PostgreSQL table (a row per key). `writeIf` keeps a text only if the
 * server still holds the one expected, in one step there: a Lua script comparing the hash field
 * (Redis), an `UPDATE … WHERE value = <expected>` or an `INSERT … ON CONFLICT DO NOTHING`
 * (PostgreSQL). So of two processes changing the same key from the same text, one wins.
 */
import type { BusConnection, QueueBus } from './bus.js'
import { createTables } from './drivers.js'

/** What a key holds in the server: its JSON, `undefined` for none. */
export type Held = string | undefined

export interface Rows {
  write(key: string, json: string): Promise<void>
  /** Writes `json` only if the server holds `expected` now; else resolves with what it holds. */
  writeIf(key: string, json: string, expected: Held): Promise<{ kept: true } | { kept: false; held: Held }>
  read(key: string): Promise<string | undefined>
  readAll(): Promise<Record<string, string>>
}

/** Where the texts are: the Redis hash, and the PostgreSQL table with its key and value columns. */
export interface RowsPlace {
  hash: string
  table: string
  key: string
  value: string
}

/** KEYS[1]: the hash; ARGV: key, the JSON expected ('' for none), the new JSON. */
const WRITE_IF = `local held = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if held ~= ARGV[2] then return {0, held} end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return {1}`

function rowsOf(connection: BusConnection, place: RowsPlace): Rows {
  if (connection.kind === 'redis') {
    const { redis } = connection
    const { hash } = place
    return {
      write: async (key, json) => void (await redis.hset(hash, key, json)),
      async writeIf(key, json, expected) {
        const [kept, held] = (await redis.eval(WRITE_IF, 1, hash, key, expected ?? '', json)) as [number, string?]
        return kept === 1 ? { kept: true } : { kept: false, held: held === '' ? undefined : held }
      },
      read: async (key) => (await redis.hget(hash, key)) ?? undefined,
      readAll: () => redis.hgetall(hash),
    }
  }
  const { query } = connection
  const { table, key: k, value: v } = place
  const read = async (key: string) => (await query<Record<string, string>>(`SELECT ${v} FROM ${table} WHERE ${k} = $1`, [key]))[0]?.[v]
  return {
    write: async (key, json) => void (await query(
      `INSERT INTO ${table} (${k}, ${v}) VALUES ($1, $2) ON CONFLICT (${k}) DO UPDATE SET ${v} = excluded.${v}`,
      [key, json],
    )),
    read,
    readAll: async () => Object.fromEntries((await query<Record<string, string>>(`SELECT ${k}, ${v} FROM ${table}`)).map((r) => [r[k], r[v]])),
    async writeIf(key, json, expected) {
      const written = expected === undefined
        ? await query(`INSERT INTO ${table} (${k}, ${v}) VALUES ($1, $2) ON CONFLICT (${k}) DO NOTHING RETURNING ${k}`, [key, json])
        : await query(`UPDATE ${table} SET ${v} = $2 WHERE ${k} = $1 AND ${v} = $3 RETURNING ${k}`, [key, json, expected])
      return written.length === 1 ? { kept: true } : { kept: false, held: await read(key) }
    },
  }
}

async function openRows(bus: QueueBus, place: RowsPlace): Promise<Rows> {
  const connection = await bus.connection()
  if (connection.kind === 'postgres') {
    await createTables((sql) => connection.query(sql), [`CREATE TABLE IF NOT EXISTS ${place.table} (${place.key} text PRIMARY KEY, ${place.value} text NOT NULL)`])
  }
  return rowsOf(connection, place)
}

/** The rows at `place`, opened on first use through the bus's connection (again after a failure). */
export function sharedRows(bus: QueueBus, place: RowsPlace): () => Promise<Rows> {
  let rows: Promise<Rows> | undefined
  return () => (rows ??= openRows(bus, place).catch((error: unknown) => {
    rows = undefined
    throw error
  }))
}
