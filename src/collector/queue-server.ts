/**
 * The collector's `queue` option (src/collector/config.ts): a redis://, rediss://, postgres:// or
 * postgresql:// URL naming the queue server, checked up front for what would otherwise fail at
 * every connection (no host, a bad `%` escape, a Redis path that is no database number). Its
 * errors name the URL's scheme or part, never the URL, which may hold a password.
 */
import { ConfigError } from '../errors.js'
import { expected } from '../message/validate.js'
import type { PgSockets } from './state/pg-sockets.js'

export interface QueueServer {
  kind: 'redis' | 'postgres'
  url: string
  /**
   * PostgreSQL: the sockets of one collector's connections to it, dropped when its `close()`
   * stops waiting for the server. Not configured: the collector adds it to its own copy.
   */
  sockets?: PgSockets
}

const QUEUE_PROTOCOLS: Record<string, QueueServer['kind']> = {
  'redis:': 'redis', 'rediss:': 'redis', 'postgres:': 'postgres', 'postgresql:': 'postgres',
}

/** The `queue` option: `undefined` (this process's memory), or the server it names, checked now. */
export function resolveQueue(value: unknown): QueueServer | undefined {
  if (value === undefined) return undefined
  const expectation = 'a redis://, rediss://, postgres:// or postgresql:// URL'
  if (typeof value !== 'string') throw expected(ConfigError, 'queue', expectation, value)
  let url: URL
  // The URL may hold a password: errors name its scheme only.
  try {
    url = new URL(value)
  } catch {
    throw new ConfigError('queue', `Expected \`queue\` to be ${expectation}, got a string that is not a URL.`)
  }
  const kind = QUEUE_PROTOCOLS[url.protocol]
  if (kind === undefined) throw new ConfigError('queue', `Expected \`queue\` to be ${expectation}, got a ${url.protocol}// URL.`)
  const problem = queueUrlProblem(kind, url)
  if (problem !== undefined) throw new ConfigError('queue', `Expected \`queue\` to be ${expectation} ${problem}.`)
  return { kind, url: value }
}

/**
 * What would make a queue server URL fail at every connection rather than now: no host (the
 * drivers would quietly try their own default), a bad `%` escape (pg and the Redis options throw
 * on it), a Redis path that is not a database number (ioredis sent `SELECT NaN`, uncaught).
 * Names the part, never its value in the credentials.
 */
function queueUrlProblem(kind: QueueServer['kind'], url: URL): string | undefined {
  if (url.hostname === '') return 'naming its host, got a URL without one'
  for (const [part, text] of [['user name', url.username], ['password', url.password], ['path', url.pathname]] as const) {
    try {
      decodeURIComponent(text)
    } catch {
      return `with valid % escapes, got a bad escape in its ${part}`
    }
  }
  if (kind === 'redis' && redisDatabase(url) === undefined) {
    return `whose path is a database number (\`/0\`) or nothing, got \`${url.pathname.slice(0, 40)}\``
  }
  return undefined
}

/**
 * The Redis database a queue URL names: its path, `/N` (an integer ≥ 0; none: 0);
 * `undefined` when the path is anything else.
 */
export function redisDatabase(url: URL): number | undefined {
  const path = url.pathname.length > 1 ? url.pathname.slice(1) : '0'
  return /^\d{1,9}$/.test(path) ? Number(path) : undefined
}
