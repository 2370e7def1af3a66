/**
 * The queue server restarted under traffic, with its data kept (Redis with its append-only file,
 * PostgreSQL): every message the collector answered 200 is delivered to the receiver in the end,
 * and no loss is reported. Senders keep posting through the restart (answered 503 while the
 * server is away, which they would retry). Real servers; the collector in this process.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createCollector } from '../../../src/collector/index.js'
import { startPostgres, startRedis } from '../../helpers/queue-servers.js'
import { batchText, startReceiver, until } from './support.js'

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

const SERVERS = [
  ['Redis (appendonly yes)', (options: { dir: string; port?: number }) => startRedis(options)],
  ['PostgreSQL', (options: { dir: string; port?: number }) => startPostgres(options)],
] as const

describe.each(SERVERS)('%s restarted under traffic', (_name, start) => {
  it('every message answered 200 is delivered; no loss reported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ia-restart-'))
    running.push(async () => rmSync(dir, { recursive: true, force: true }))
    let server = await start({ dir })
    running.push(() => server.stop())
    const receiver = await startReceiver(() => 200)
    running.push(() => receiver.close())
    const reports: string[] = []
    const collector = createCollector({
      sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: receiver.url }], retryWindow: 600_000 } }],
      queue: server.url,
      adminToken: 'admin-token-for-tests',
      onError: (error) => reports.push((error as Error).message),
    })
    running.push(() => collector.close(1_000))

    const acknowledged: string[] = []
    const statuses = new Map<number, number>()
    let next = 100_000
    let restarted = false
    let afterRestart = 0
    /** One sender: batches of 5 until 10 were answered 200 after the restart. */
    const sender = async () => {
      while (afterRestart < 10) {
        const from = (next += 5)
        const response = await collector.fetch(new Request('http://collector/v1/batch', {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
          body: batchText(from, 5),
        }))
        await response.arrayBuffer()
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
        if (response.status === 200) {
          for (let i = 0; i < 5; i++) acknowledged.push(`m-${from + i}`)
          if (restarted) afterRestart++
        }
      }
    }
    const senders = [sender(), sender(), sender()]
    /** A restart that failed ends the senders too, which would otherwise go on past the test. */
    const stopSenders = (error: unknown): never => {
      afterRestart = Infinity
      throw error
    }
    await until(() => acknowledged.length >= 100, '100 acknowledged before the restart', 20_000)
    await server.stop().catch(stopSenders)
    server = await start({ dir, port: server.port }).catch(stopSenders)
    restarted = true
    await Promise.all(senders)

    const delivered = () => new Set(receiver.accepted.map((r) => r.messageId))
    await until(() => acknowledged.every((id) => delivered().has(id)), 'every acknowledged message delivered', 60_000,
      () => `${acknowledged.filter((id) => !delivered().has(id)).length} of ${acknowledged.length} missing; answers ${JSON.stringify([...statuses])}`)
    expect(reports.filter((r) => r.includes('came back without'))).toEqual([])
  }, 90_000)
})
