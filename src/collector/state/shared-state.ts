/**
 * State every collector process on one queue server shares, kept in that server (a Redis hash
 * and keys, or PostgreSQL tables): the counters (pending, retrying, forwarded, failed,
 * deduplicated… per source) and the audience memberships.
 *
 * Counter increments are gathered locally and written together (`flush`, every 250 ms and on
 * close): a process killed between two flushes loses its last quarter-second of increments, so
 * the counters are operational figures, not the delivery guarantee (the jobs are). Memberships
 * are written at once.
 */
import type { QueueServer } from '../config.js'

interface Store {
  write(deltas: ReadonlyMap<string, number>): Promise<void>
  read(): Promise<Record<string, number>>
  getMembers(key: string): Promise<string[] | undefined>
  setMembers(key: string, members: readonly string[]): Promise<void>
  close(): Promise<void>
}

const PREFIX = 'isomorphic-analytics'
const TABLE = 'isomorphic_analytics_counters'
const MEMBERS_TABLE = 'isomorphic_analytics_memberships'

/** Usable at once: increments made before the server is reached are written by the first flush. */
export class SharedState {
  readonly #store: Promise<Store>
  #deltas = new Map<string, number>()

  constructor(server: QueueServer) {
    this.#store = openStore(server)
    this.#store.catch(() => {})
  }

  add(key: string, delta: number): void {
    this.#deltas.set(key, (this.#deltas.get(key) ?? 0) + delta)
  }

  async flush(): Promise<void> {
    const store = await this.#store
    if (this.#deltas.size === 0) return
    const deltas = this.#deltas
    this.#deltas = new Map()
    try {
      await store.write(deltas)
    } catch (error) {
      for (const [key, delta] of deltas) this.add(key, delta)
      throw error
    }
  }

  async read(): Promise<Record<string, number>> {
    return (await this.#store).read()
  }

  async getMembers(key: string): Promise<string[] | undefined> {
    return (await this.#store).getMembers(key)
  }

  async setMembers(key: string, members: readonly string[]): Promise<void> {
    await (await this.#store).setMembers(key, members)
  }

  async close(): Promise<void> {
    await (await this.#store).close()
  }
}

class RedisStore implements Store {
  constructor(private readonly redis: import('ioredis').Redis) {}

  async write(deltas: ReadonlyMap<string, number>): Promise<void> {
    const pipeline = this.redis.pipeline()
    for (const [key, delta] of deltas) pipeline.hincrby(`${PREFIX}:counters`, key, delta)
    await pipeline.exec()
  }

  async read(): Promise<Record<string, number>> {
    const all = await this.redis.hgetall(`${PREFIX}:counters`)
    return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, Number(v)]))
  }

  async getMembers(key: string): Promise<string[] | undefined> {
    const text = await this.redis.hget(`${PREFIX}:memberships`, key)
    return text === null ? undefined : (JSON.parse(text) as string[])
  }

  async setMembers(key: string, members: readonly string[]): Promise<void> {
    await this.redis.hset(`${PREFIX}:memberships`, key, JSON.stringify(members))
  }

  async close(): Promise<void> {
    await this.redis.quit()
  }
}

class PostgresStore implements Store {
  constructor(private readonly pool: import('pg').Pool) {}

  async write(deltas: ReadonlyMap<string, number>): Promise<void> {
    const keys = [...deltas.keys()]
    await this.pool.query(
      `INSERT INTO ${TABLE} (key, value) SELECT * FROM unnest($1::text[], $2::bigint[])
       ON CONFLICT (key) DO UPDATE SET value = ${TABLE}.value + excluded.value`,
      [keys, keys.map((k) => deltas.get(k))],
    )
  }

  async read(): Promise<Record<string, number>> {
    const { rows } = await this.pool.query<{ key: string; value: string }>(`SELECT key, value FROM ${TABLE}`)
    return Object.fromEntries(rows.map((r) => [r.key, Number(r.value)]))
  }

  async getMembers(key: string): Promise<string[] | undefined> {
    const { rows } = await this.pool.query<{ members: string[] }>(`SELECT members FROM ${MEMBERS_TABLE} WHERE key = $1`, [key])
    return rows[0]?.members
  }

  async setMembers(key: string, members: readonly string[]): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${MEMBERS_TABLE} (key, members) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET members = excluded.members`,
      [key, JSON.stringify(members)],
    )
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

// Computed specifiers: bundlers for workers and browsers do not follow them (Node-only clients).
const IOREDIS = 'ioredis'
const PG = 'pg'

async function openStore(server: QueueServer): Promise<Store> {
  if (server.kind === 'redis') {
    const { Redis } = (await import(/* webpackIgnore: true */ /* @vite-ignore */ IOREDIS)) as typeof import('ioredis')
    return new RedisStore(new Redis(server.url, { maxRetriesPerRequest: null }))
  }
  const pg = (await import(/* webpackIgnore: true */ /* @vite-ignore */ PG)) as typeof import('pg') & { default?: typeof import('pg') }
  const Pool = (pg.default ?? pg).Pool
  const pool = new Pool({ connectionString: server.url, max: 2 })
  // Two processes starting together may both create: the loser's error is a duplicate, not a fault.
  for (const ddl of [
    `CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value bigint NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${MEMBERS_TABLE} (key text PRIMARY KEY, members jsonb NOT NULL)`,
  ]) {
    await pool.query(ddl).catch((error: { code?: string }) => {
      if (error.code !== '23505' && error.code !== '42P07') throw error
    })
  }
  return new PostgresStore(pool)
}
