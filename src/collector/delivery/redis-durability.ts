/**
 * What a Redis queue server must keep for the collector's 200s to mean "will be delivered": its
 * data across a restart (persistence) and every key under memory pressure (`noeviction`, as
 * BullMQ asks). Checked once the queue is open (`redisSettingsWarnings`), and a loss watched for
 * afterwards (`watchRedisData`): a marker key that is gone after a reconnection means the server
 * came back without what it held.
 */
import { messageOf } from '../../errors.js'

/** The few commands of an ioredis client used here (BullMQ's queue client is one). */
export interface RedisCommands {
  config(subcommand: 'GET', parameter: string): Promise<unknown>
  set(key: string, value: string, mode: 'NX'): Promise<unknown>
  on(event: 'ready', listener: () => void): unknown
}

/** Its presence says the server still holds what the collector wrote to it. */
export const MARKER_KEY = 'isomorphic-analytics:marker'

/**
 * Warnings, one per setting, for a Redis that would lose acknowledged deliveries: no append-only
 * file (`appendonly no`: a restart loses everything since the last RDB snapshot, or everything
 * with `save ""`), or a `maxmemory-policy` other than `noeviction` (keys, jobs among them, are
 * evicted when memory runs out). A server that refuses `CONFIG` (renamed or disabled, as managed
 * services do) gets one warning saying the settings could not be checked. Never throws.
 */
export async function redisSettingsWarnings(client: RedisCommands, where: string): Promise<string[]> {
  let settings: Map<string, string>
  try {
    settings = new Map<string, string>()
    for (const name of ['appendonly', 'save', 'maxmemory-policy']) {
      const pair = (await client.config('GET', name)) as string[]
      if (pair.length >= 2) settings.set(pair[0], pair[1])
    }
  } catch (error) {
    return [`Redis at ${where}: its persistence and maxmemory-policy could not be checked (CONFIG GET was refused: ${messageOf(error)}). `
      + 'Make sure it runs with `appendonly yes` and `maxmemory-policy noeviction`, or a restart or a full memory loses deliveries the collector answered 200.']
  }
  const warnings: string[] = []
  const save = settings.get('save')
  if (settings.get('appendonly') === 'no') {
    const lost = save ? `deliveries queued since its last RDB snapshot (save "${save}")` : 'every queued delivery (save "" and appendonly no: no persistence at all)'
    warnings.push(`Redis at ${where} has appendonly no: a restart loses ${lost}, though the collector answered them 200. `
      + 'Fix: set `appendonly yes` in redis.conf (or run CONFIG SET appendonly yes, then CONFIG REWRITE).')
  }
  const policy = settings.get('maxmemory-policy')
  if (policy !== undefined && policy !== 'noeviction') {
    warnings.push(`Redis at ${where} has maxmemory-policy ${policy}: when its memory is full it evicts keys, queued deliveries among them (BullMQ needs noeviction). `
      + 'Fix: set `maxmemory-policy noeviction` in redis.conf (or run CONFIG SET maxmemory-policy noeviction, then CONFIG REWRITE).')
  }
  return warnings
}

/**
 * Writes the marker (if absent) and, on every later reconnection of `client`, writes it again:
 * written anew (it was gone), the server lost its data (a restart without persistence, a flush,
 * an eviction), and `report` is told, with what to do. Resolves once the first marker is written.
 */
export async function watchRedisData(client: RedisCommands, where: string, report: (error: Error) => void): Promise<void> {
  await client.set(MARKER_KEY, String(Date.now()), 'NX')
  client.on('ready', () => {
    client.set(MARKER_KEY, String(Date.now()), 'NX').then((written) => {
      if (written === 'OK') {
        report(new Error(`Redis at ${where} came back without the collector's data (restarted without persistence, flushed or evicted): `
          + 'deliveries it held, answered 200 to their senders, are lost. Run Redis with `appendonly yes` and `maxmemory-policy noeviction`.'))
      }
    }, () => {
      // The connection went again: the next `ready` checks.
    })
  })
}
