/**
 * The shared state (./shared-state.ts) in PostgreSQL tables, made at first use (`TABLES`):
 * counters, memberships, claimed messageIds and settled marks, the last two with their expiry
 * (expired rows are deleted about once a minute), and turns under way.
 */
import type { JobSize, KeptRows, Mark, Store } from './store.js'
import { KEPT_COUNTED_MS, type KeptPayload, type KeptWindow } from '../replay/kept.js'
import { webhookIdOf } from '../../webhooks/standard.js'

const TABLE = 'isomorphic_analytics_counters'
const MEMBERS_TABLE = 'isomorphic_analytics_memberships'
const CLAIMS_TABLE = 'isomorphic_analytics_message_ids'
const SETTLED_TABLE = 'isomorphic_analytics_settled'
const TURNS_TABLE = 'isomorphic_analytics_turns'
const KEPT_TABLE = 'isomorphic_analytics_kept'

/** The tables, created if missing when the store opens. */
export const TABLES = [
  `CREATE TABLE IF NOT EXISTS ${TABLE} (key text PRIMARY KEY, value bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${MEMBERS_TABLE} (key text PRIMARY KEY, members jsonb NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${CLAIMS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS ${SETTLED_TABLE} (job text NOT NULL, payload integer NOT NULL, expires_at bigint NOT NULL, PRIMARY KEY (job, payload))`,
  `CREATE TABLE IF NOT EXISTS ${TURNS_TABLE} (key text PRIMARY KEY, owner text NOT NULL, expires_at bigint NOT NULL)`,
  // Payloads kept for replay: `body` until `expires_at` (then NULL: no longer kept, still counted).
  `CREATE TABLE IF NOT EXISTS ${KEPT_TABLE} (source text NOT NULL, id text NOT NULL, at bigint NOT NULL, failed boolean NOT NULL, body text, expires_at bigint NOT NULL, PRIMARY KEY (source, id))`,
  `CREATE INDEX IF NOT EXISTS ${KEPT_TABLE}_at ON ${KEPT_TABLE} (source, at)`,
]

export class PostgresStore implements Store, KeptRows {
  constructor(
    private readonly pool: import('pg').Pool,
    /** The clock of the payloads kept for replay (their expiry, and when they are swept). */
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

  /** Marks without their outcome: PostgreSQL keeps payloads for replay in rows of their own (`keep`). */
  async settledOf(job: string, count: number): Promise<Map<number, string>> {
    const { rows } = await this.pool.query<{ payload: number }>(`SELECT payload FROM ${SETTLED_TABLE} WHERE job = $1 AND payload < $2`, [job, count])
    return new Map(rows.map((r) => [r.payload, '']))
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

  #keptSweptAt = 0

  /**
   * A replay that settles keeps its payload under the same row (its acceptance time unchanged).
   * About once a minute, bodies past their retention are dropped, and rows past `KEPT_COUNTED_MS` more.
   */
  async keep(items: readonly KeptPayload[], retentionMs: number): Promise<void> {
    const now = this.now()
    await this.pool.query(
      `INSERT INTO ${KEPT_TABLE} (source, id, at, failed, body, expires_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::boolean[], $5::text[], $6::bigint[])
       ON CONFLICT (source, id) DO UPDATE SET failed = excluded.failed, body = excluded.body, expires_at = ${KEPT_TABLE}.at + $7::bigint`,
      [items.map((i) => i.source), items.map((i) => webhookIdOf(i.body)), items.map((i) => i.at), items.map((i) => i.failed), items.map((i) => i.body), items.map((i) => i.at + retentionMs), retentionMs],
    )
    if (now - this.#keptSweptAt <= 60_000) return
    this.#keptSweptAt = now
    await this.pool.query(`UPDATE ${KEPT_TABLE} SET body = NULL WHERE expires_at < $1 AND body IS NOT NULL`, [now])
    await this.pool.query(`DELETE FROM ${KEPT_TABLE} WHERE at < $1`, [now - retentionMs - KEPT_COUNTED_MS])
  }

  async window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow> {
    const { rows } = await this.pool.query<{ at: string; failed: boolean; body: string | null }>(
      `SELECT at, failed, CASE WHEN expires_at >= $4 THEN body END AS body FROM ${KEPT_TABLE}
       WHERE source = $1 AND at >= $2 AND at <= $3 ${failedOnly ? 'AND failed' : ''} ORDER BY at`,
      [source, from, to, this.now()],
    )
    const result: KeptWindow = { kept: [], unavailable: 0 }
    for (const row of rows) {
      if (row.body === null) result.unavailable++
      else result.kept.push({ source, at: Number(row.at), failed: row.failed, body: row.body })
    }
    return result
  }

  async close(): Promise<void> {
    await this.pool.end()
  }
}
