/**
 * BullMQ and the queue servers' client libraries (`ioredis`, `pg`: BullMQ's own peer
 * dependencies), loaded only when a `queue` is configured, and the connection options BullMQ is
 * given for a `queue` URL. Computed specifiers: bundlers for workers and browsers do not follow
 * them (they are Node-only clients).
 */
import { redisDatabase, type QueueServer } from '../config.js'
import { settlesWithin } from '../settles-within.js'
import { collectorWorkerClass, type CollectorWorker } from './bullmq-worker.js'
import type { PgSockets } from './pg-sockets.js'

const BULLMQ = 'bullmq'
const IOREDIS = 'ioredis'
const PG = 'pg'

/** BullMQ (an optional peer dependency); its absence is an error that says what to install. */
export async function loadBullmq(server: QueueServer): Promise<typeof import('bullmq')> {
  await server.sockets?.ready
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ BULLMQ)) as typeof import('bullmq')
  } catch (cause) {
    const packages = server.kind === 'redis' ? 'bullmq ioredis' : 'bullmq pg'
    throw new Error(`The collector's \`queue\` option needs BullMQ: npm install ${packages}`, { cause })
  }
}

/**
 * BullMQ's `connection` for `server`: PostgreSQL takes pg's options (`pgOptions`; `migrate`:
 * BullMQ creates or updates its tables on first connect); Redis, the URL's parts as ioredis options
 * (credentials decoded, `/N` the database, `rediss:` TLS). BullMQ makes its connections from them.
 */
export function bullmqConnection(server: QueueServer): Record<string, unknown> {
  if (server.kind === 'postgres') return { ...pgOptions(server), migrate: true }
  const url = new URL(server.url)
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    ...(url.username && { username: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    // Checked by the config (`redisDatabase`): `/N`, or nothing for 0.
    db: redisDatabase(url) ?? 0,
    ...(url.protocol === 'rediss:' && { tls: {} }),
    maxRetriesPerRequest: null,
    ...REDIS_CLIENT_OPTIONS,
  }
}

/**
 * ioredis's wait before reconnecting try `times`: at most a second, so a collector is back within
 * about a second of its Redis (BullMQ's own waits grow to 20 s: after an outage of 20 s or so,
 * senders went on being refused for as long again; ioredis's own, to 2 s).
 */
export const reconnectDelay = (times: number): number => Math.min(1_000, 100 * times)

/** BullMQ's backend for `server`: its Postgres backend, or `undefined` for Redis (BullMQ's own). */
function bullmqBackend(bullmq: typeof import('bullmq'), server: QueueServer): unknown {
  return server.kind === 'postgres' ? bullmq.createPostgresBackend : undefined
}

/** A BullMQ `Queue` called `name` on `server`, as the collector opens its own. */
export function bullmqQueue(bullmq: typeof import('bullmq'), server: QueueServer, name: string): import('bullmq').Queue {
  const options = { connection: bullmqConnection(server) } as never
  const backend = bullmqBackend(bullmq, server)
  return backend ? new bullmq.Queue(name, options, backend as never) : new bullmq.Queue(name, options)
}

/** A BullMQ `Worker` of the queue `name` on `server` (`options` without the connection, which is added), see `bullmq-worker.ts`. */
export function bullmqWorker(
  bullmq: typeof import('bullmq'),
  server: QueueServer,
  name: string,
  processor: import('bullmq').Processor,
  options: Record<string, unknown>,
): CollectorWorker {
  const withConnection = { ...options, connection: bullmqConnection(server) } as never
  const backend = bullmqBackend(bullmq, server)
  const Worker = collectorWorkerClass(bullmq)
  return backend ? new Worker(name, processor, withConnection, backend as never) : new Worker(name, processor, withConnection)
}

/**
 * Redis: refuses (rejects) when the server does not take the URL's database: ioredis reports a
 * refused `SELECT` as an event and goes on in database 0, where jobs would be written. Waits
 * while the server is away, as BullMQ's connections do; `hold` is given what drops the client.
 */
export async function checkRedisDatabase(server: QueueServer, hold: (drop: () => void) => void): Promise<void> {
  if (server.kind !== 'redis') return
  const { db, ...options } = bullmqConnection(server)
  const client = new (await loadRedis())({ ...options, lazyConnect: true } as never)
  client.on('error', () => {})
  hold(() => client.disconnect())
  try {
    await client.select(db as number)
  } finally {
    client.disconnect()
  }
}

/** `ioredis`'s client class. */
export async function loadRedis(): Promise<typeof import('ioredis').Redis> {
  return ((await import(/* webpackIgnore: true */ /* @vite-ignore */ IOREDIS)) as typeof import('ioredis')).Redis
}

/** `pg`, whether it comes as a CommonJS default export or as named exports; `server`'s sockets ready. */
export async function loadPg(server?: QueueServer): Promise<typeof import('pg')> {
  await server?.sockets?.ready
  const pg = (await import(/* webpackIgnore: true */ /* @vite-ignore */ PG)) as typeof import('pg') & { default?: typeof import('pg') }
  return pg.default ?? pg
}

/** pg's client options for `server`: its URL, and its sockets when it has them (`PgSockets`). */
export function pgOptions(server: QueueServer): { connectionString: string; stream?: PgSockets['stream'] } {
  return { connectionString: server.url, ...(server.sockets && { stream: server.sockets.stream }) }
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

/** How long a closing connection may wait for a queue server that does not answer. */
export const CLOSE_WAIT_MS = 500

/**
 * ioredis's `disconnectTimeout` for every client of ours and BullMQ's: how long a client it
 * disconnects waits for its socket to close before destroying it, a timer that holds the process
 * after the collector's `close`. A client not connected then (it never was, or lost its server)
 * waits all of it for a socket closed already, one whose server does not answer too; ioredis's
 * default is 2 s. Nothing is lost by ending sooner: no reply is awaited on a disconnection.
 */
export const DISCONNECT_TIMEOUT_MS = 100

/**
 * The options of every ioredis client of the collector, BullMQ's, the counters' and the bus's:
 * reconnections within a second, a short disconnection. (BullMQ's and the counters' also have
 * their commands wait through a reconnection: `maxRetriesPerRequest: null`.)
 */
export const REDIS_CLIENT_OPTIONS = { disconnectTimeout: DISCONNECT_TIMEOUT_MS, retryStrategy: reconnectDelay }

/**
 * Closes ioredis clients: QUIT, or at once (`disconnect`) when the server has not answered within
 * `CLOSE_WAIT_MS`. QUIT to a server that is down waits for a reconnection that may never come,
 * and a collector must exit within its drain timeout whatever the queue server does.
 */
export async function quitRedis(...clients: ReadonlyArray<import('ioredis').Redis>): Promise<void> {
  const quit = Promise.all(clients.map((client) => client.quit().catch(() => {})))
  if (!(await settlesWithin(quit, CLOSE_WAIT_MS))) for (const client of clients) client.disconnect()
}
