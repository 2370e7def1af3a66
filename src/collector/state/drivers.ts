/**
 * The queue servers' client libraries (`ioredis`, `pg`: BullMQ's own peer dependencies), loaded
 * only when a `queue` is configured. Computed specifiers: bundlers for workers and browsers do
 * not follow them (they are Node-only clients).
 */
const IOREDIS = 'ioredis'
const PG = 'pg'

/** `ioredis`'s client class. */
export async function loadRedis(): Promise<typeof import('ioredis').Redis> {
  return ((await import(/* webpackIgnore: true */ /* @vite-ignore */ IOREDIS)) as typeof import('ioredis')).Redis
}

/** `pg`, whether it comes as a CommonJS default export or as named exports. */
export async function loadPg(): Promise<typeof import('pg')> {
  const pg = (await import(/* webpackIgnore: true */ /* @vite-ignore */ PG)) as typeof import('pg') & { default?: typeof import('pg') }
  return pg.default ?? pg
}

/**
 * Runs `CREATE TABLE IF NOT EXISTS` statements. Two processes starting together may both create:
 * the loser's error is a duplicate (of the table, of its row type, or of a catalog key), not a
 * fault, and is ignored.
 */
export async function createTables(query: (sql: string) => Promise<unknown>, statements: readonly string[]): Promise<void> {
  for (const sql of statements) {
    await query(sql).catch((error: { code?: string }) => {
      // 42P07 duplicate_table, 42710 duplicate_object (the row type), 23505 unique_violation (catalog).
      if (error.code !== '42P07' && error.code !== '42710' && error.code !== '23505') throw error
    })
  }
}
