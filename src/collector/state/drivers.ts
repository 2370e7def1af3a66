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
