/** Real queue servers (redis-server, PostgreSQL) for the durable-collector tests: see scripts/queue-servers.mjs. */
import { startPostgres, startRedis } from '../../scripts/queue-servers.mjs'

export { freePort, startPostgres, startRedis, type QueueServerProcess } from '../../scripts/queue-servers.mjs'

/** Each server by name, for `describe.each(QUEUE_SERVERS)('%s: …', (_name, start) => …)`. */
export const QUEUE_SERVERS = [
  ['Redis', startRedis],
  ['PostgreSQL', startPostgres],
] as const
