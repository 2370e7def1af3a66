/** Real queue servers (redis-server, PostgreSQL) for the durable-collector tests: see scripts/queue-servers.mjs. */
export { freePort, startPostgres, startRedis, type QueueServerProcess } from '../../scripts/queue-servers.mjs'
