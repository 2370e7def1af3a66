/**
 * State every collector process on one queue server shares, kept in that server (a Redis hash
 * and keys, or PostgreSQL tables): the counters (pending, retrying, forwarded, failed,
 * deduplicated… per source), the audience memberships, and the messageIds claimed for
 * de-duplication (`claim`), and which payloads of a `batch` job have settled (`settle`).
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
 *
 * Settled marks (`settle`, `settledOf`, `forget`): a `batch` job marks each payload once its
 * attempt's outcome is known, so that a re-run after its process died sends again only what was
 * in flight (see `bullmq-jobs.ts`). Redis: one `SET key 1 PX ttl` per payload, pipelined, and one
 * `UNLINK` of a job's keys once it completed; PostgreSQL: rows (job, payload) inserted and deleted
 * in one statement per write, expired rows deleted with the expired claims.
 */
import type { QueueServer } from '../config.js'
import { createTables, loadPg, loadRedis, pgOptions, quitRedis, REDIS_CLIENT_OPTIONS } from './drivers.js'

interface Store {
  write(deltas: ReadonlyMap<string, number>): Promise<void>
  read(): Promise<Record<string, number>>
  getMembers(key: string): Promise<string[] | undefined>
  setMembers(key: string, members: readonly string[]): Promise<void>
  /** The keys (distinct) this owner holds once done: newly claimed, or claimed by it before. */
  claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>>
  settle(marks: readonly Mark[], ttlMs: number): Promise<void>
  settledOf(job: string, count: number): Promise<Set<number>>
  forget(jobs: readonly JobSize[]): Promise<void>
  close(): Promise<void>
}

const PREFIX = 'isomorphic-analytics'
const TABLE = 'isomorphic_analytics_counters'
const MEMBERS_TABLE = 'isomorphic_analytics_memberships'
const CLAIMS_TABLE = 'isomorphic_analytics_message_ids'
const SETTLED_TABLE = 'isomorphic_analytics_settled'

/** A `batch` job (its key) and one of its payloads (index in the job). */
export type Mark = readonly [job: string, index: number]
/** A `batch` job (its key) and its number of payloads. */
export type JobSize = readonly [job: string, count: number]

/** Usable at once: increments made before the server is reached are written by the first flush. */
export class SharedState {
  readonly #server: QueueServer
  #opened: Promise<Store>
  #failed = false
  #deltas = new Map<string, number>()

  constructor(server: QueueServer) {
    this.#server = server
    this.#opened = this.#open()
  }

  #open(): Promise<Store> {
    const opened = openStore(this.#server)
    opened.catch(() => void (this.#failed = true))
    return opened
  }

  /**
   * The store, opened again when the last try failed: a PostgreSQL not running at start-up (or
   * its database not created yet) is used once it is (BullmqQueue tries about once a second).
   */
  get #store(): Promise<Store> {
    if (this.#failed) {
      this.#failed = false
      this.#opened = this.#open()
    }
    return this.#opened
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
   * Claims `messageIds` of `source` for `owner` (a job's id and when it was added) for `ttlMs`:
   * those it holds (new, or already its own); the others are someone else's (duplicates).
   */
  async claim(source: string, messageIds: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    if (messageIds.length === 0) return new Set()
    const keys = [...new Set(messageIds.map((id) => `${source}\u001f${id}`))]
    const held = await (await this.#store).claim(keys, owner, ttlMs)
    return new Set(messageIds.filter((id) => held.has(`${source}\u001f${id}`)))
  }

  /** Marks these payloads (job key, index in the job) settled, for `ttlMs` at most. */
  async settle(marks: readonly Mark[], ttlMs: number): Promise<void> {
    if (marks.length > 0) await (await this.#store).settle(marks, ttlMs)
  }

  /** The indexes, among a job's first `count` payloads, marked settled. */
  async settledOf(job: string, count: number): Promise<Set<number>> {
    return (await this.#store).settledOf(job, count)
  }

  /** Drops the marks of jobs that completed (each with its number of payloads). */
  async forget(jobs: readonly JobSize[]): Promise<void> {
    if (jobs.length > 0) await (await this.#store).forget(jobs)
  }

  async close(): Promise<void> {
    await (await this.#store).close()
  }
}

const settledKey = (job: string, index: number) => `${PREFIX}:settled:${job}:${index}`

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

  async settle(marks: readonly Mark[], ttlMs: number): Promise<void> {
    const pipeline = this.redis.pipeline()
    for (const [job, index] of marks) pipeline.set(settledKey(job, index), '1', 'PX', ttlMs)
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
  }

  async settledOf(job: string, count: number): Promise<Set<number>> {
    if (count === 0) return new Set()
    const values = await this.redis.mget(Array.from({ length: count }, (_, i) => settledKey(job, i)))
    return new Set(values.flatMap((value, i) => (value === null ? [] : [i])))
  }

  async forget(jobs: readonly JobSize[]): Promise<void> {
    const keys = jobs.flatMap(([job, count]) => Array.from({ length: count }, (_, i) => settledKey(job, i)))
    if (keys.length > 0) await this.redis.unlink(keys)
  }

  async close(): Promise<void> {
    await quitRedis(this.redis)
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

  /** About once a minute: expired claims and settled marks are deleted. */
  async #sweep(now: number): Promise<void> {
    if (now - this.#sweptAt <= 60_000) return
    this.#sweptAt = now
    await this.pool.query(`DELETE FROM ${CLAIMS_TABLE} WHERE expires_at < $1`, [now])
    await this.pool.query(`DELETE FROM ${SETTLED_TABLE} WHERE expires_at < $1`, [now])
  }

  async claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    const now = Date.now()
    await this.#sweep(now)
    const { rows } = await this.pool.query<{ key: string }>(
      `INSERT INTO ${CLAIMS_TABLE} (key, owner, expires_at) SELECT k, $2, $3 FROM unnest($1::text[]) AS k
       ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ${CLAIMS_TABLE}.expires_at < $4 OR ${CLAIMS_TABLE}.owner = excluded.owner
       RETURNING key`,
      [keys, owner, now + ttlMs, now],
    )
    return new Set(rows.map((r) => r.key))
  }

  async settle(marks: readonly Mark[], ttlMs: number): Promise<void> {
    const now = Date.now()
    await this.#sweep(now)
    await this.pool.query(
      `INSERT INTO ${SETTLED_TABLE} (job, payload, expires_at) SELECT j, i, $3 FROM unnest($1::text[], $2::integer[]) AS m (j, i)
       ON CONFLICT (job, payload) DO NOTHING`,
      [marks.map(([job]) => job), marks.map(([, index]) => index), now + ttlMs],
    )
  }

  async settledOf(job: string, count: number): Promise<Set<number>> {
    const { rows } = await this.pool.query<{ payload: number }>(`SELECT payload FROM ${SETTLED_TABLE} WHERE job = $1 AND payload < $2`, [job, count])
    return new Set(rows.map((r) => r.payload))
  }

  async forget(jobs: readonly JobSize[]): Promise<void> {
    await this.pool.query(`DELETE FROM ${SETTLED_TABLE} WHERE job = ANY($1::text[])`, [jobs.map(([job]) => job)])
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}

async function openStore(server: QueueServer): Promise<Store> {
  if (server.kind === 'redis') {
    const Redis = await loadRedis()
    const redis = new Redis(server.url, { ...REDIS_CLIENT_OPTIONS, maxRetriesPerRequest: null })
    // Its failures surface through the commands that fail, reported by their callers; without a
    // listener ioredis would also print each one ("Unhandled error event").
    redis.on('error', () => {})
    return new RedisStore(redis)
  }
  const { Pool } = await loadPg(server)
  const pool = new Pool({ ...pgOptions(server), max: 4 })
  // An idle client's failure (the server stopped or restarted) is emitted on the pool, and an
  // 'error' without a listener would end the process; the queries that fail are reported by
  // their callers, and the pool replaces the client.
  pool.on('error', () => {})
  await createTables((sql) => pool.query(sql), [
    `CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value bigint NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${MEMBERS_TABLE} (key text PRIMARY KEY, members jsonb NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${CLAIMS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${SETTLED_TABLE} (job text NOT NULL, payload integer NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (job, payload))`,
  ]).catch(async (error: unknown) => {
    // Tried again with a new pool (`SharedState#store`).
    await pool.end().catch(() => {})
    throw error
  })
  return new PostgresStore(pool)
}
