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

/** Payloads kept by one script. */
const KEEP_CHUNK = 500

/**
 * Keeps payloads for replay. KEYS: per payload, its source's index and its body's key; ARGV: when
 * entries stop being counted, then per payload its id, acceptance time, `f` or `d` (failed or
 * delivered), ms left to keep its body (none when ≤ 0) and body. Its index entry replaces one of
 * the other outcome (a replay settled); each index touched drops the entries no longer counted.
 */
const KEEP = `local swept = {}
for i = 1, #KEYS / 2 do
  local index, a = KEYS[2 * i - 1], 5 * i - 3
  local id, flag, ttl = ARGV[a], ARGV[a + 2], tonumber(ARGV[a + 3])
  redis.call('zrem', index, (flag == 'f' and 'd' or 'f') .. id)
  redis.call('zadd', index, ARGV[a + 1], flag .. id)
  if ttl > 0 then redis.call('set', KEYS[2 * i], ARGV[a + 4], 'PX', ttl) end
  if not swept[index] then
    swept[index] = true
    redis.call('zremrangebyscore', index, '-inf', ARGV[1])
  end
end`

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

  /**
   * One script per `KEEP_CHUNK` payloads, sent together (one round trip, and one command per
   * chunk instead of three per payload).
   */
  async keep(items: readonly KeptPayload[], retentionMs: number): Promise<void> {
    const now = Date.now()
    // Entries are counted (as no longer kept) for `KEPT_COUNTED_MS` past the retention.
    const forgotten = now - retentionMs - KEPT_COUNTED_MS
    const chunks: Array<Promise<unknown>> = []
    for (let start = 0; start < items.length; start += KEEP_CHUNK) {
      const keys: string[] = []
      const args: Array<string | number> = [forgotten]
      for (const item of items.slice(start, start + KEEP_CHUNK)) {
        const id = webhookIdOf(item.body)
        keys.push(keptIndex(item.source), keptBody(item.source, id))
        args.push(id, item.at, item.failed ? 'f' : 'd', item.at + retentionMs - now, item.body)
      }
      chunks.push(this.redis.eval(KEEP, keys.length, ...keys, ...args))
    }
    await Promise.all(chunks)
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
