/**
 * State every collector process on one queue server shares, kept in that server (a Redis hash
 * and keys, or PostgreSQL tables): the counters (pending, retrying, forwarded, failed,
 * deduplicated… per source), the audience memberships, and the messageIds claimed for
 * de-duplication (`claim`).
 *
 * Counter increments are gathered locally and written together (`flush`, every 250 ms and on
 * close): a process killed between two flushes loses its last quarter-second of increments, so
 * the counters are operational figures, not the delivery guarantee (the jobs are). Memberships
 * are written at once.
 *
 * De-duplication by (source, messageId) for 24 hours, the one mechanism with a queue server: a
 * `batch` job claims its messages' ids before their first attempt, naming itself as the owner.
 * An id already claimed by another job is a duplicate; one claimed by the same job (re-run after
 * its process died) is still its own. Redis: one `SET key owner NX PX ttl GET` per id, pipelined;
 * PostgreSQL: one upsert that takes over only expired or own rows (expired rows are deleted about
 * once a minute).
 */
import type { QueueServer } from '../config.js'
import { createTables, loadPg, loadRedis } from './drivers.js'

interface Store {
  write(deltas: ReadonlyMap<string, number>): Promise<void>
  read(): Promise<Record<string, number>>
  getMembers(key: string): Promise<string[] | undefined>
  setMembers(key: string, members: readonly string[]): Promise<void>
  /** The keys (distinct) this owner holds once done: newly claimed, or claimed by it before. */
  claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>>
  close(): Promise<void>
}

const PREFIX = 'isomorphic-analytics'
const TABLE = 'isomorphic_analytics_counters'
const MEMBERS_TABLE = 'isomorphic_analytics_memberships'
const CLAIMS_TABLE = 'isomorphic_analytics_message_ids'

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

  /**
   * Claims `messageIds` of `source` for `owner` (a job id) for `ttlMs`: resolves with those it
   * holds (new, or already its own); the others were claimed by someone else (duplicates).
   */
  async claim(source: string, messageIds: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set()
    const keys = [...new Set(messageIds.map((id) => `${source}\u001f${id}`))]
    const held = await (await this.#store).claim(keys, owner, ttlMs)
    return new Set(messageIds.filter((id) => held.has(`${source}\u001f${id}`)))
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

  async claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    const pipeline = this.redis.pipeline()
    for (const key of keys) pipeline.set(`${PREFIX}:id:${key}`, owner, 'PX', ttlMs, 'NX', 'GET')
    const replies = (await pipeline.exec()) ?? []
    const held = new Set<string>()
    replies.forEach(([error, previous], i) => {
      if (error) throw error
      if (previous === null || previous === owner) held.add(keys[i])
    })
    return held
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

  #sweptAt = 0

  async claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    const now = Date.now()
    if (now - this.#sweptAt > 60_000) {
      this.#sweptAt = now
      await this.pool.query(`DELETE FROM ${CLAIMS_TABLE} WHERE expires_at < $1`, [now])
    }
    const { rows } = await this.pool.query<{ key: string }>(
      `INSERT INTO ${CLAIMS_TABLE} (key, owner, expires_at) SELECT k, $2, $3 FROM unnest($1::text[]) AS k
       ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ${CLAIMS_TABLE}.expires_at < $4 OR ${CLAIMS_TABLE}.owner = excluded.owner
       RETURNING key`,
      [keys, owner, now + ttlMs, now],
    )
    return new Set(rows.map((r) => r.key))
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

async function openStore(server: QueueServer): Promise<Store> {
  if (server.kind === 'redis') {
    const Redis = await loadRedis()
    return new RedisStore(new Redis(server.url, { maxRetriesPerRequest: null }))
  }
  const { Pool } = await loadPg()
  const pool = new Pool({ connectionString: server.url, max: 4 })
  await createTables((sql) => pool.query(sql), [
    `CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value bigint NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${MEMBERS_TABLE} (key text PRIMARY KEY, members jsonb NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${CLAIMS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
  ])
  return new PostgresStore(pool)
}
