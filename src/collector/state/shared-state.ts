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
 * in flight (see `bullmq-jobs.ts`), and how it settled. A payload's first mark stays. Redis: one
 * `SET key outcome PX ttl NX` per payload, pipelined, and one `UNLINK` of a job's keys once it
 * completed; PostgreSQL: rows (job, payload, outcome) inserted (`ON CONFLICT DO NOTHING`) and
 * deleted in one statement per write, expired rows deleted with the expired claims.
 *
 * Turns (`turn`): what one process at a time may do, such as an audience's sync (read the
 * membership, queue the changes, write it): a key with its owner and a time to live, taken only
 * when no other owner holds it (Redis `SET NX PX`; PostgreSQL an upsert that takes over only an
 * expired row), and ended by its owner.
 */
import type { QueueServer } from '../config.js'
import { randomUUID } from '#platform'
import { createTables, loadPg, loadRedis, pgOptions, REDIS_CLIENT_OPTIONS } from './drivers.js'
import { PostgresStore, TABLES } from './postgres-store.js'
import { RedisStore } from './redis-store.js'
import type { JobSize, Mark, Store } from './store.js'
import type { KeptCounts } from '../replay/kept-jobs.js'

export type { JobSize, Mark, Store }


/** How often a process waiting for a turn another one holds tries to take it. */
const TURN_POLL_MS = 25


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

  /** The indexes, among a job's first `count` payloads, marked settled, with the outcome each mark holds. */
  async settledOf(job: string, count: number): Promise<Map<number, string>> {
    return (await this.#store).settledOf(job, count)
  }

  /** Drops the marks of jobs that completed (each with its number of payloads). */
  async forget(jobs: readonly JobSize[]): Promise<void> {
    if (jobs.length > 0) await (await this.#store).forget(jobs)
  }

  /**
   * Waits until no process holds the turn `key`, `waitMs` at most, and takes it for `ttlMs` at
   * most (a process that dies holding it holds it no longer than that): the function that ends
   * it, or `undefined` when another process held it all the while.
   */
  async turn(key: string, ttlMs: number, waitMs: number): Promise<(() => Promise<void>) | undefined> {
    const owner = randomUUID()
    const deadline = Date.now() + waitMs
    const store = await this.#store
    while (!(await store.takeTurn(key, owner, ttlMs))) {
      if (Date.now() >= deadline) return undefined
      await new Promise((resolve) => setTimeout(resolve, TURN_POLL_MS))
    }
    return () => store.endTurn(key, owner)
  }

  /** The counts of the payloads kept for replay in the completed jobs (../replay/kept-jobs.ts). */
  async keptCounts(): Promise<KeptCounts> {
    return this.#store
  }

  async close(): Promise<void> {
    await (await this.#store).close()
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
  await createTables((sql) => pool.query(sql), TABLES).catch(async (error: unknown) => {
    // Tried again with a new pool (`SharedState#store`).
    await pool.end().catch(() => {})
    throw error
  })
  return new PostgresStore(pool)
}
