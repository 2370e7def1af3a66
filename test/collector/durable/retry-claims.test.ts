/**
 * A retry by hand with a queue server (`retriesByHand`, console/retries.ts): of two collector
 * processes asked at once to retry the same failed delivery, one may; and only the shared
 * `failed` count moves. Real redis-server and PostgreSQL, two `SharedState`s as two processes.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { retriesByHand } from '../../../src/collector/console/retries.js'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { Tally } from '../../../src/collector/stats.js'
import { startPostgres, startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'

const cleanup: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

describe.each<[string, 'redis' | 'postgres', () => Promise<QueueServerProcess>]>([
  ['Redis', 'redis', () => startRedis()],
  ['PostgreSQL', 'postgres', () => startPostgres()],
])('retries by hand on %s', (_name, kind, start) => {
  async function twoProcesses() {
    const server = await start()
    cleanup.push(() => server.stop())
    const processes = [0, 1].map(() => {
      const shared = new SharedState({ kind, url: server.url })
      cleanup.push(() => shared.close())
      const tally = new Tally(['web'], (key, delta) => shared.add(key, delta))
      return { shared, tally, retries: retriesByHand(tally, shared) }
    })
    return processes
  }

  it('the same delivery after the same attempt: one claim of many, at once, from two processes; after a later attempt, claimable again', async () => {
    const [a, b] = await twoProcesses()
    const claims = await Promise.all([a, b, a, b].map((p) => p.retries.claim!('boot1.7', 3)))
    expect(claims.filter(Boolean)).toHaveLength(1)
    // Failed again after the retry (attempt 4): another retry by hand may be made.
    expect(await b.retries.claim!('boot1.7', 4)).toBe(true)
    expect(await a.retries.claim!('boot1.8', 3)).toBe(true)
  })

  it("moves the shared `failed` only: each process's own counts stay what it did", async () => {
    const [a, b] = await twoProcesses()
    a.tally.failed('web')
    await a.shared.flush()
    expect((await a.shared.read())['web|failed']).toBe(1)
    // Retried by hand through B: the shared count goes back; neither process's own goes below 0.
    b.retries.unfailed('web')
    await b.shared.flush()
    expect((await a.shared.read())['web|failed']).toBe(0)
    expect([a.tally.snapshot().totals.failed, b.tally.snapshot().totals.failed]).toEqual([1, 0])
  })
})

describe('retries by hand without a queue server', () => {
  it('take the message out of the process\'s own `failed`, and claim nothing (one process: its record decides)', () => {
    const tally = new Tally(['web'])
    tally.failed('web')
    const retries = retriesByHand(tally, undefined)
    retries.unfailed('web')
    expect(tally.snapshot().totals.failed).toBe(0)
    expect(retries.claim).toBeUndefined()
  })
})
