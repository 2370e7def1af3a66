/**
 * PostgreSQL's sweep of the payloads kept for replay, on a real PostgreSQL with an injected clock:
 * about once a minute (at a write), bodies past their retention are dropped (the row stays, to
 * count it as no longer kept), and rows past `KEPT_COUNTED_MS` more are deleted.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { KEPT_COUNTED_MS, keptPayload } from '../../../src/collector/replay/kept.js'
import { createTables, loadPg } from '../../../src/collector/state/drivers.js'
import { PostgresStore, TABLES } from '../../../src/collector/state/postgres-store.js'
import { startPostgres } from '../../helpers/queue-servers.js'

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

const MINUTE = 60_000
const HOUR = 3_600_000
const T0 = Date.parse('2026-11-29T00:00:00.000Z')
const body = (n: string) => JSON.stringify({ type: 'track', event: 'Kept', userId: 'u-1', messageId: n, version: 1 })

describe('payloads kept for replay in PostgreSQL', () => {
  it('drops bodies past the retention and rows past the counted week, at most once a minute', async () => {
    const server = await startPostgres()
    running.push(() => server.stop())
    const { Pool } = await loadPg()
    const pool = new Pool({ connectionString: server.url, max: 2 })
    await createTables((sql) => pool.query(sql), TABLES)
    const clock = { now: T0 }
    const store = new PostgresStore(pool, () => clock.now)
    running.push(() => store.close())
    // What the table holds: each row's messageId and whether its body is still there.
    const rows = async () => (await pool.query<{ body: string | null }>('SELECT body FROM isomorphic_analytics_kept ORDER BY at')).rows
      .map((r, i) => (r.body === null ? `#${i} swept` : (JSON.parse(r.body) as { messageId: string }).messageId))
    const all = () => store.window('web', 0, Number.MAX_SAFE_INTEGER, false)

    await store.keep([keptPayload('web', body('a'), T0, true), keptPayload('web', body('b'), T0 + MINUTE, false)], HOUR)
    expect(await rows()).toEqual(['a', 'b'])

    // Past a's hour: the next write sweeps its body; its row stays, counted as no longer kept.
    clock.now = T0 + HOUR + 30_000
    await store.keep([keptPayload('web', body('c'), clock.now, false)], HOUR)
    expect(await rows()).toEqual(['#0 swept', 'b', 'c'])
    expect(await all()).toMatchObject({ kept: [{ body: body('b') }, { body: body('c') }], unavailable: 1 })

    // Past b's hour, but within a minute of the last sweep: not swept yet, though no longer kept.
    clock.now = T0 + HOUR + 80_000
    await store.keep([keptPayload('web', body('d'), clock.now, true)], HOUR)
    expect(await rows()).toEqual(['#0 swept', 'b', 'c', 'd'])
    expect(await all()).toMatchObject({ kept: [{ body: body('c') }, { body: body('d') }], unavailable: 2 })
    clock.now += MINUTE
    await store.keep([], HOUR)
    expect(await rows()).toEqual(['#0 swept', '#1 swept', 'c', 'd'])

    // A week past a's retention: its row is deleted (no longer counted); b's (a minute later) is still counted.
    clock.now = T0 + HOUR + KEPT_COUNTED_MS + 30_000
    await store.keep([], HOUR)
    expect(await rows()).toEqual(['#0 swept', '#1 swept', '#2 swept'])
    expect(await all()).toEqual({ kept: [], unavailable: 3 })
    expect(await store.window('web', 0, Number.MAX_SAFE_INTEGER, true)).toEqual({ kept: [], unavailable: 1 })
  }, 60_000)
})
