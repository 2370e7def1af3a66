/**
 * The shared state (./shared-state.ts) in Redis: the counters and memberships in two hashes, a
 * key per claimed messageId, per settled mark and per turn, each with its time to live.
 */
import type { JobSize, Mark, Store } from './store.js'
import { quitRedis } from './drivers.js'
import { KEPT_COUNTED_MS, type KeptPayload, type KeptWindow } from '../replay/kept.js'
import { webhookIdOf } from '../../webhooks/standard.js'

const PREFIX = 'isomorphic-analytics'

const settledKey = (job: string, index: number) => `${PREFIX}:settled:${job}:${index}`
/** A source's payloads kept for replay: a sorted set of `d<id>` / `f<id>` (delivered, failed) by acceptance time… */
const keptIndex = (source: string) => `${PREFIX}:kept:${source}`
/** …and each one's body, until its retention ends (an index entry without one is no longer kept). */
const keptBody = (source: string, id: string) => `${PREFIX}:kept:${source}:${id}`
/** Bodies read at once. */
const MGET_CHUNK = 1_000

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

  async keep(items: readonly KeptPayload[], retentionMs: number): Promise<void> {
    const now = Date.now()
    const pipeline = this.redis.pipeline()
    for (const item of items) {
      const index = keptIndex(item.source)
      const id = webhookIdOf(item.body)
      pipeline.zrem(index, `d${id}`, `f${id}`)
      pipeline.zadd(index, item.at, `${item.failed ? 'f' : 'd'}${id}`)
      const ttl = item.at + retentionMs - now
      if (ttl > 0) pipeline.set(keptBody(item.source, id), item.body, 'PX', ttl)
    }
    // Entries are counted (as no longer kept) for `KEPT_COUNTED_MS` past the retention.
    for (const source of new Set(items.map((item) => item.source))) pipeline.zremrangebyscore(keptIndex(source), '-inf', now - retentionMs - KEPT_COUNTED_MS)
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
  }

  async window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow> {
    const flat = await this.redis.zrangebyscore(keptIndex(source), from, to, 'WITHSCORES')
    const entries: Array<{ id: string; at: number; failed: boolean }> = []
    for (let i = 0; i < flat.length; i += 2) {
      const failed = flat[i][0] === 'f'
      if (!failedOnly || failed) entries.push({ id: flat[i].slice(1), at: Number(flat[i + 1]), failed })
    }
    const result: KeptWindow = { kept: [], unavailable: 0 }
    for (let i = 0; i < entries.length; i += MGET_CHUNK) {
      const chunk = entries.slice(i, i + MGET_CHUNK)
      const bodies = await this.redis.mget(chunk.map((e) => keptBody(source, e.id)))
      chunk.forEach((e, j) => {
        const body = bodies[j]
        if (body === null) result.unavailable++
        else result.kept.push({ source, at: e.at, failed: e.failed, body })
      })
    }
    return result
  }

  async close(): Promise<void> {
    await quitRedis(this.redis)
  }
}
