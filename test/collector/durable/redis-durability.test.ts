/**
 * A Redis that would lose what the collector answered 200: said plainly at start (no persistence,
 * an eviction policy, or settings that could not be read because CONFIG is disabled), and a loss
 * reported when the server comes back without its data (restarted without persistence). Real
 * redis-server; the collector in this process, asked through its fetch handler.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector, type Collector } from '../../../src/collector/index.js'
import { startRedis } from '../../helpers/queue-servers.js'
import { batchText, startReceiver, until } from './support.js'

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

/** A collector in this process on `queue` delivering to `webhook`; what it reports, as text. */
function collectorOn(queue: string, webhook = 'http://127.0.0.1:9/hook'): { collector: Collector; reports: string[] } {
  const reports: string[] = []
  const collector = createCollector({
    sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: webhook }], retryWindow: 600_000 } }],
    queue,
    adminToken: 'admin-token-for-tests',
    onError: (error) => reports.push((error as Error).message),
  })
  running.push(() => collector.close(0))
  return { collector, reports }
}

const batch = (from: number, count: number) => new Request('http://collector/v1/batch', {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
  body: batchText(from, count),
})

describe('the collector checks its Redis at start', () => {
  it('no persistence and an eviction policy: one warning each, naming the setting and the fix', async () => {
    const redis = await startRedis({ persistence: false, args: ['--maxmemory-policy', 'allkeys-lru'] })
    running.push(() => redis.stop())
    const { reports } = collectorOn(redis.url)
    await until(() => reports.length >= 2, 'two warnings', 10_000, () => reports.join(' | '))
    const host = `127.0.0.1:${redis.port}`
    expect(reports).toEqual([
      expect.stringContaining(`Redis at ${host} has appendonly no: a restart loses every queued delivery (save "" and appendonly no: no persistence at all), though the collector answered them 200. Fix: set \`appendonly yes\``),
      expect.stringContaining(`Redis at ${host} has maxmemory-policy allkeys-lru: when its memory is full it evicts keys, queued deliveries among them (BullMQ needs noeviction). Fix: set \`maxmemory-policy noeviction\``),
    ])
  }, 30_000)

  it('RDB snapshots only: the warning says what a restart loses', async () => {
    const redis = await startRedis({ persistence: false, args: ['--save', '3600 1'] })
    running.push(() => redis.stop())
    const { reports } = collectorOn(redis.url)
    await until(() => reports.length >= 1, 'a warning', 10_000)
    expect(reports).toEqual([expect.stringContaining('has appendonly no: a restart loses deliveries queued since its last RDB snapshot (save "3600 1")')])
  }, 30_000)

  it('appendonly yes and noeviction: nothing to say', async () => {
    const redis = await startRedis()
    running.push(() => redis.stop())
    const receiver = await startReceiver(() => 200)
    running.push(() => receiver.close())
    const { collector, reports } = collectorOn(redis.url, receiver.url)
    expect((await collector.fetch(batch(95_000, 3))).status).toBe(200)
    await until(() => receiver.accepted.length === 3, 'the batch delivered')
    expect(reports).toEqual([])
  }, 30_000)

  it('CONFIG disabled (as managed services do): says the settings could not be checked, and what they must be', async () => {
    const redis = await startRedis({ args: ['--rename-command', 'CONFIG', ''] })
    running.push(() => redis.stop())
    const { reports } = collectorOn(redis.url)
    await until(() => reports.length >= 1, 'a warning', 10_000)
    expect(reports).toEqual([expect.stringMatching(
      /Redis at 127\.0\.0\.1:\d+: its persistence and maxmemory-policy could not be checked \(CONFIG GET was refused: ERR unknown command .*\)\. Make sure it runs with `appendonly yes` and `maxmemory-policy noeviction`/,
    )])
  }, 30_000)
})

describe('Redis restarted without persistence', () => {
  it('the loss of what it held is reported once it is back, naming the fix', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ia-redis-loss-'))
    running.push(async () => rmSync(dir, { recursive: true, force: true }))
    let redis = await startRedis({ persistence: false, dir })
    running.push(() => redis.stop())
    // Held pending: the receiver refuses every attempt.
    const receiver = await startReceiver(() => 503)
    running.push(() => receiver.close())
    const { collector, reports } = collectorOn(redis.url, receiver.url)
    expect((await collector.fetch(batch(96_000, 5))).status).toBe(200)
    await until(() => receiver.attempts.length > 0, 'a first attempt')
    const warnings = reports.length
    await redis.stop()
    redis = await startRedis({ persistence: false, dir, port: redis.port })
    await until(() => reports.some((r) => r.includes('came back without')), 'the loss reported', 15_000, () => reports.join(' | '))
    expect(reports.slice(warnings)).toContainEqual(
      `The collector's queue server: Redis at 127.0.0.1:${redis.port} came back without the collector's data (restarted without persistence, flushed or evicted): deliveries it held, answered 200 to their senders, are lost. Run Redis with \`appendonly yes\` and \`maxmemory-policy noeviction\`.`,
    )
  }, 40_000)
})
