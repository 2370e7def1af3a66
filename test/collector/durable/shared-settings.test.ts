/**
 * The queue server's settings store (state/shared-settings.ts), `saveIf`: a change sent with
 * `If-Match` is kept only if the server still holds the settings the process last had from it,
 * in one step there. Two processes changing a source from the same settings, at once: one wins.
 * Real redis-server and PostgreSQL, two buses as two processes.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { SourceWebhooksConfig } from '../../../src/collector/index.js'
import { QueueBus } from '../../../src/collector/state/bus.js'
import { queueSettings } from '../../../src/collector/state/shared-settings.js'
import { startPostgres, startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

const settings = (url: string): SourceWebhooksConfig => ({ enabled: true, urls: [{ url, headers: { Authorization: `Bearer for ${url}` } }], sharedSecret: 'a-shared-secret' })

describe.each<[string, 'redis' | 'postgres', () => Promise<QueueServerProcess>]>([
  ['Redis', 'redis', () => startRedis()],
  ['PostgreSQL', 'postgres', () => startPostgres()],
])('the settings store on %s', (_name, kind, start) => {
  async function twoProcesses() {
    const server = await start()
    cleanup.push(() => server.stop())
    return [0, 1].map(() => {
      const bus = new QueueBus({ kind, url: server.url }, (error) => { throw error })
      cleanup.push(() => bus.close())
      return queueSettings(bus, (error) => { throw error })
    })
  }

  it('saveIf keeps a change made from the settings held, and refuses one made from others, answering what is held', async () => {
    const [a, b] = await twoProcesses()
    const first = settings('https://first.test/in')
    expect(await a.saveIf!('web', first, undefined)).toEqual({ kept: true, durable: true })
    // B had nothing for the source: the server holds A's now.
    expect(await b.saveIf!('web', settings('https://b.test/in'), undefined)).toEqual({ kept: false, held: first })
    const second = settings('https://second.test/in')
    expect(await b.saveIf!('web', second, first)).toEqual({ kept: true, durable: true })
    // A, still from the first settings: refused, and told what is held.
    expect(await a.saveIf!('web', settings('https://a.test/in'), first)).toEqual({ kept: false, held: second })
    expect(await a.load!()).toEqual({ web: second })
    // A plain save overwrites, whatever is held.
    await a.save('web', first)
    expect(await b.load!()).toEqual({ web: first })
  })

  it('of many changes made at once from the same settings, through two processes, exactly one is kept', async () => {
    const [a, b] = await twoProcesses()
    const base = settings('https://base.test/in')
    await a.save('web', base)
    const changes = Array.from({ length: 8 }, (_, i) => settings(`https://change-${i}.test/in`))
    const results = await Promise.all(changes.map((change, i) => (i % 2 === 0 ? a : b).saveIf!('web', change, base)))
    const kept = results.flatMap((r, i) => (r.kept ? [changes[i]] : []))
    expect(kept).toHaveLength(1)
    expect(await b.load!()).toEqual({ web: kept[0] })
  })
})
