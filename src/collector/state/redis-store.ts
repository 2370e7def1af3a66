/**
 * The shared state (./shared-state.ts) in Redis: the counters and memberships in two hashes, a
 * key per claimed messageId, per settled mark and per turn, each with its time to live.
 */
import type { JobSize, Mark, Store } from './store.js'
import { quitRedis } from './drivers.js'

const PREFIX = 'isomorphic-analytics'

const settledKey = (job: string, index: number) => `${PREFIX}:settled:${job}:${index}`

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
    for (const [job, index] of marks) pipeline.set(settledKey(job, index), '1', 'PX', ttlMs)
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
  }

  async settledOf(job: string, count: number): Promise<Set<number>> {
    if (count === 0) return new Set()
    const values = await this.redis.mget(Array.from({ length: count }, (_, i) => settledKey(job, i)))
    return new Set(values.flatMap((value, i) => (value === null ? [] : [i])))
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

  async close(): Promise<void> {
    await quitRedis(this.redis)
  }
}
