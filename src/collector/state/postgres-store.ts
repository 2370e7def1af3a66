/**
 * The shared state (./shared-state.ts) in PostgreSQL tables, made at first use (`TABLES`):
 * counters, memberships, claimed messageIds and settled marks (with their outcome), turns under
 * way, and the counts of the payloads kept for replay in the completed jobs (a row per source and
 * minute, ../replay/kept-jobs.ts). Claims, marks and counts expire: expired rows are deleted about
 * once a minute, at a write (`#sweep`).
 */
import type { JobSize, Mark, Store } from './store.js'
import { KEPT_COUNTED_MS } from '../replay/kept.js'
import { MINUTE, type KeptCount } from '../replay/kept-jobs.js'

const TABLE = 'isomorphic_analytics_counters'
const MEMBERS_TABLE = 'isomorphic_analytics_memberships'
const CLAIMS_TABLE = 'isomorphic_analytics_message_ids'
const SETTLED_TABLE = 'isomorphic_analytics_settled'
const TURNS_TABLE = 'isomorphic_analytics_turns'
const KEPT_COUNTS_TABLE = 'isomorphic_analytics_kept_counts'

/** The tables, created if missing when the store opens. */
export const TABLES = [
  `CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${MEMBERS_TABLE} (key text PRIMARY KEY, members jsonb NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${CLAIMS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${SETTLED_TABLE} (job text NOT NULL, payload integer NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (job, payload))`,
  // How the payload settled (a letter, ../replay/kept-jobs.ts): a column added to 0.1.0's table.
  `ALTER TABLE ${SETTLED_TABLE} ADD COLUMN IF NOT EXISTS outcome text`,
  `CREATE TABLE IF NOT EXISTS ${TURNS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${KEPT_COUNTS_TABLE} (source text NOT NULL, minute bigint NOT NULL, settled bigint NOT NULL, failed bigint NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (source, minute))`,
]

export class PostgresStore implements Store {
  constructor(
    private readonly pool: import('pg').Pool,
    /** The clock of the rows that expire (claims, settled marks, counts) and of their sweep. */
    private readonly now: () => number = Date.now,
  ) {}

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

  /** About once a minute (at a write): expired claims, settled marks and counts are deleted. */
  async #sweep(now: number): Promise<void> {
    if (now - this.#sweptAt <= 60_000) return
    this.#sweptAt = now
    for (const table of [CLAIMS_TABLE, SETTLED_TABLE, KEPT_COUNTS_TABLE]) await this.pool.query(`DELETE FROM ${table} WHERE expires_at < $1`, [now])
  }

  async claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    const now = this.now()
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
    const now = this.now()
    await this.#sweep(now)
    await this.pool.query(
      `INSERT INTO ${SETTLED_TABLE} (job, payload, expires_at, outcome) SELECT j, i, $3, o FROM unnest($1::text[], $2::integer[], $4::text[]) AS m (j, i, o)
       ON CONFLICT (job, payload) DO NOTHING`,
      [marks.map(([job]) => job), marks.map(([, index]) => index), now + ttlMs, marks.map(([, , outcome]) => outcome)],
    )
  }

  async settledOf(job: string, count: number): Promise<Map<number, string>> {
    const { rows } = await this.pool.query<{ payload: number; outcome: string | null }>(`SELECT payload, outcome FROM ${SETTLED_TABLE} WHERE job = $1 AND payload < $2`, [job, count])
    return new Map(rows.map((r) => [r.payload, r.outcome ?? '']))
  }

  async forget(jobs: readonly JobSize[]): Promise<void> {
    await this.pool.query(`DELETE FROM ${SETTLED_TABLE} WHERE job = ANY($1::text[])`, [jobs.map(([job]) => job)])
  }

  /** An expired turn is taken over; ended ones are deleted (the table holds turns under way). */
  async takeTurn(key: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = Date.now()
    const { rowCount } = await this.pool.query(
      `INSERT INTO ${TURNS_TABLE} (key, owner, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at
       WHERE ${TURNS_TABLE}.expires_at < $4`,
      [key, owner, now + ttlMs, now],
    )
    return rowCount === 1
  }

  async endTurn(key: string, owner: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${TURNS_TABLE} WHERE key = $1 AND owner = $2`, [key, owner])
  }

  /**
   * Added to the rows of their source and minute, in one statement (those of one minute summed
   * first: a row is updated once per statement; in key order, as every process writes them, so
   * two processes never wait on each other's rows). Rows no longer counted expire (`#sweep`).
   */
  async countKept(counts: readonly KeptCount[], retentionMs: number): Promise<void> {
    if (counts.length === 0) return
    await this.#sweep(this.now())
    await this.pool.query(
      `INSERT INTO ${KEPT_COUNTS_TABLE} (source, minute, settled, failed, expires_at)
       SELECT s, m, sum(a), sum(f), $5 + m * ${MINUTE} FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[]) AS c (s, m, a, f)
       GROUP BY s, m ORDER BY s, m
       ON CONFLICT (source, minute) DO UPDATE SET settled = ${KEPT_COUNTS_TABLE}.settled + excluded.settled, failed = ${KEPT_COUNTS_TABLE}.failed + excluded.failed`,
      [counts.map((c) => c.source), counts.map((c) => c.minute), counts.map((c) => c.all), counts.map((c) => c.failed), retentionMs + KEPT_COUNTED_MS + MINUTE],
    )
  }

  async keptCounts(source: string, fromMinute: number, toMinute: number): Promise<Map<number, { all: number; failed: number }>> {
    const { rows } = await this.pool.query<{ minute: string; settled: string; failed: string }>(
      `SELECT minute, settled, failed FROM ${KEPT_COUNTS_TABLE} WHERE source = $1 AND minute BETWEEN $2 AND $3`,
      [source, fromMinute, toMinute],
    )
    return new Map(rows.map((r) => [Number(r.minute), { all: Number(r.settled), failed: Number(r.failed) }]))
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
