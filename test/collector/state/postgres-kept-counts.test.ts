/**
 * PostgreSQL's counts of the payloads kept for replay in the completed jobs
 * (src/collector/state/postgres-store.ts), on a real PostgreSQL with an injected clock: added up
 * per source and minute, however many processes write them; read per window of minutes; and
 * about once a minute (at a write), the rows no longer counted (`KEPT_COUNTED_MS` past the
 * retention) are deleted.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { KEPT_COUNTED_MS } from '../../../src/collector/replay/kept.js'
import { MINUTE } from '../../../src/collector/replay/kept-jobs.js'
import { createTables, loadPg } from '../../../src/collector/state/drivers.js'
import { PostgresStore, TABLES } from '../../../src/collector/state/postgres-store.js'
import { startPostgres } from '../../helpers/queue-servers.js'

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

const HOUR = 3_600_000
const M0 = Date.parse('2026-11-29T00:00:00.000Z') / MINUTE

describe('counts of the payloads kept for replay in PostgreSQL', () => {
  it('adds up per source and minute, from several stores at once, and deletes what is no longer counted at most once a minute', async () => {
    const server = await startPostgres()
    running.push(() => server.stop())
    const { Pool } = await loadPg()
    const pool = new Pool({ connectionString: server.url, max: 4 })
    running.push(() => pool.end())
    await createTables((sql) => pool.query(sql), TABLES)
    const clock = { now: M0 * MINUTE }
    // Two processes' stores on one server, one clock.
    const [a, b] = [new PostgresStore(pool, () => clock.now), new PostgresStore(pool, () => clock.now)]

    await Promise.all([
      // A minute twice in one write (several jobs' counts together): summed, not refused.
      a.countKept([{ source: 'web', minute: M0, all: 2, failed: 1 }, { source: 'web', minute: M0, all: 1, failed: 0 }, { source: 'web', minute: M0 + 1, all: 1, failed: 1 }], HOUR),
      b.countKept([{ source: 'web', minute: M0 + 1, all: 3, failed: 0 }, { source: 'app', minute: M0, all: 5, failed: 5 }], HOUR),
    ])
    // A replay that settled delivered: no payload more, one failed fewer.
    await b.countKept([{ source: 'web', minute: M0, all: 0, failed: -1 }], HOUR)
    expect(await a.keptCounts('web', M0, M0 + 1)).toEqual(new Map([[M0, { all: 3, failed: 0 }], [M0 + 1, { all: 4, failed: 1 }]]))
    expect(await b.keptCounts('web', M0 + 1, M0 + 5)).toEqual(new Map([[M0 + 1, { all: 4, failed: 1 }]]))
    expect(await a.keptCounts('app', M0, M0)).toEqual(new Map([[M0, { all: 5, failed: 5 }]]))

    // Past minute M0's counted week after the retention (not M0 + 1's): `a`'s next write, over a
    // minute after its last sweep, deletes M0's rows.
    const swept = (M0 + 1) * MINUTE + HOUR + KEPT_COUNTED_MS + 1
    clock.now = swept
    await a.countKept([{ source: 'web', minute: M0 + 2, all: 1, failed: 0 }], HOUR)
    expect(await a.keptCounts('web', M0, M0 + 2)).toEqual(new Map([[M0 + 1, { all: 4, failed: 1 }], [M0 + 2, { all: 1, failed: 0 }]]))
    expect(await a.keptCounts('app', M0, M0)).toEqual(new Map())

    // A minute later M0 + 1 is past its week too, but `a` swept a minute ago, not more: kept…
    clock.now = swept + 60_000
    await a.countKept([{ source: 'web', minute: M0 + 2, all: 1, failed: 0 }], HOUR)
    expect(await a.keptCounts('web', M0, M0 + 2)).toEqual(new Map([[M0 + 1, { all: 4, failed: 1 }], [M0 + 2, { all: 2, failed: 0 }]]))
    // …until its next write after that minute.
    clock.now = swept + 60_001
    await a.countKept([{ source: 'web', minute: M0 + 3, all: 1, failed: 0 }], HOUR)
    expect(await a.keptCounts('web', M0, M0 + 3)).toEqual(new Map([[M0 + 2, { all: 2, failed: 0 }], [M0 + 3, { all: 1, failed: 0 }]]))
  })
})
