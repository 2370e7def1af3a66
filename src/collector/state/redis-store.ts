/**
 * The shared state (./shared-state.ts) in Redis: the counters and memberships in two hashes, a
 * key per claimed messageId, per settled mark and per turn, each with its time to live, and the
 * counts of the payloads kept for replay in the completed jobs (a hash per source and hour).
 */
import type { JobSize, Mark, Store } from './store.js'
import { quitRedis } from './drivers.js'
import { KEPT_COUNTED_MS } from '../replay/kept.js'
import { MINUTE, type KeptCount } from '../replay/kept-jobs.js'

const PREFIX = 'isomorphic-analytics'

const settledKey = (job: string, index: number) => `${PREFIX}:settled:${job}:${index}`
/** A source's payloads settled in one hour (by minute of acceptance), counted for replay (../replay/kept-jobs.ts). */
const keptCountKey = (source: string, hour: number) => `${PREFIX}:kept-count:${source}:${hour}`
const HOUR = 3_600_000

/** Deletes a turn's key if its owner still holds it (one script: no other owner's turn is ended). */
const END_TURN = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"

export class RedisStore implements Store {
  constructor(private readonly redis: import('ioredis').Redis) {}

  async write(deltas: ReadonlyMap<string, number>): Promise<void> {
    const pipeline = this.redis.pipeline()
    for (const [key, delta] of deltas) pipeline.hincrby(`${PREFIX}:counters`, key, delta)
    await pipeline.exec()
  }

  async read(): Promise<Record<string, number>> {
    const all = await this.redis.hgetall(`${PREFIX}:counters`)
    return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, Number(v)]))
  }

  async getMembers(key: string): Promise<string[] | undefined> {
    const text = await this.redis.hget(`${PREFIX}:memberships`, key)
    return text === null ? undefined : (JSON.parse(text) as string[])
  }

  async setMembers(key: string, members: readonly string[]): Promise<void> {
    await this.redis.hset(`${PREFIX}:memberships`, key, JSON.stringify(members))
  }

  async claim(keys: readonly string[], owner: string, ttlMs: number): Promise<Set<string>> {
    const pipeline = this.redis.pipeline()
    for (const key of keys) pipeline.set(`${PREFIX}:id:${key}`, owner, 'PX', ttlMs, 'NX', 'GET')
    const replies = (await pipeline.exec()) ?? []
    const held = new Set<string>()
    replies.forEach(([error, previous], i) => {
      if (error) throw error
      if (previous === null || previous === owner) held.add(keys[i])
    })
    return held
  }

  async settle(marks: readonly Mark[], ttlMs: number): Promise<void> {
    const pipeline = this.redis.pipeline()
    for (const [job, index, outcome] of marks) pipeline.set(settledKey(job, index), outcome, 'PX', ttlMs, 'NX')
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
  }

  async settledOf(job: string, count: number): Promise<Map<number, string>> {
    if (count === 0) return new Map()
    const values = await this.redis.mget(Array.from({ length: count }, (_, i) => settledKey(job, i)))
    return new Map(values.flatMap((value, i) => (value === null ? [] : [[i, value] as const])))
  }

  async forget(jobs: readonly JobSize[]): Promise<void> {
    const keys = jobs.flatMap(([job, count]) => Array.from({ length: count }, (_, i) => settledKey(job, i)))
    if (keys.length > 0) await this.redis.unlink(keys)
  }

  async takeTurn(key: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${PREFIX}:turn:${key}`, owner, 'PX', ttlMs, 'NX')) === 'OK'
  }

  async endTurn(key: string, owner: string): Promise<void> {
    await this.redis.eval(END_TURN, 1, `${PREFIX}:turn:${key}`, owner)
  }

  /** One field per minute (and its failed ones), in a hash per hour that expires once no longer counted. */
  async countKept(counts: readonly KeptCount[], retentionMs: number): Promise<void> {
    if (counts.length === 0) return
    const pipeline = this.redis.pipeline()
    for (const { source, minute, all, failed } of counts) {
      const hour = Math.floor((minute * MINUTE) / HOUR)
      const key = keptCountKey(source, hour)
      if (all !== 0) pipeline.hincrby(key, String(minute), all)
      if (failed !== 0) pipeline.hincrby(key, `${minute}f`, failed)
      pipeline.pexpireat(key, (hour + 1) * HOUR + retentionMs + KEPT_COUNTED_MS)
    }
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
  }

  async keptCounts(source: string, fromMinute: number, toMinute: number): Promise<Map<number, { all: number; failed: number }>> {
    const counts = new Map<number, { all: number; failed: number }>()
    if (fromMinute > toMinute) return counts
    const pipeline = this.redis.pipeline()
    for (let hour = Math.floor((fromMinute * MINUTE) / HOUR); hour <= Math.floor((toMinute * MINUTE) / HOUR); hour++) pipeline.hgetall(keptCountKey(source, hour))
    for (const [error, fields] of (await pipeline.exec()) ?? []) {
      if (error) throw error
      for (const [field, value] of Object.entries(fields as Record<string, string>)) {
        const failed = field.endsWith('f')
        const minute = Number(failed ? field.slice(0, -1) : field)
        if (minute < fromMinute || minute > toMinute) continue
        const count = counts.get(minute) ?? { all: 0, failed: 0 }
        if (failed) count.failed += Number(value)
        else count.all += Number(value)
        counts.set(minute, count)
      }
    }
    return counts
  }

  async close(): Promise<void> {
    await quitRedis(this.redis)
  }
}
