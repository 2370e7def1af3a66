/**
 * The queue server's bus on PostgreSQL after its LISTEN connection is lost (a server restart, a
 * failover, `pg_terminate_backend`): one connection replaces it, however often it happens, and
 * each message is still heard once. pg emits two errors for one lost connection; a reconnection
 * each doubled the listeners at every loss until the server refused clients. Real PostgreSQL.
 */
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { QueueBus } from '../../../src/collector/state/bus.js'
import { startPostgres, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { until } from './support.js'

let server: QueueServerProcess
let admin: pg.Client
beforeAll(async () => {
  server = await startPostgres()
  admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
}, 60_000)
afterAll(async () => {
  await admin?.end()
  await server?.stop()
})

/** The server's connections whose last statement was the bus's LISTEN, by pid. */
const listenerPids = async (): Promise<number[]> =>
  (await admin.query("SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND pid <> pg_backend_pid()")).rows.map((row: { pid: number }) => row.pid)
const listeners = async () => (await listenerPids()).length

it('a lost LISTEN connection is replaced by one, every time; messages are heard once', async () => {
  const errors: unknown[] = []
  const bus = new QueueBus({ kind: 'postgres', url: server.url }, (error) => errors.push(error))
  const other = new QueueBus({ kind: 'postgres', url: server.url }, () => {})
  const heard: unknown[] = []
  bus.subscribe((topic, data) => heard.push([topic, data]))
  try {
    await Promise.all([bus.ready(), other.ready()])
    for (let round = 1; round <= 4; round++) {
      const lost = await listenerPids()
      await admin.query('SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid', [lost])
      // A terminated backend lingers in pg_stat_activity a moment: counted are new connections,
      // once the lost ones are gone. Both buses reconnect a second later (doubled, they would be
      // 2, 4, 8… each, at once).
      const renewed = async () => {
        const pids = await listenerPids()
        return pids.some((pid) => lost.includes(pid)) ? 0 : pids.length
      }
      await until(async () => (await renewed()) >= 2, `round ${round}: both buses listening again`, 10_000)
      expect(await renewed()).toBe(2)
    }
    // A second reconnection of one loss would come with the same delay.
    await new Promise((resolve) => setTimeout(resolve, 1_200))
    expect(await listeners()).toBe(2)
    await other.publish('ping', { n: 1 }, { now: true })
    await until(() => heard.length > 0, 'the message heard')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(heard).toEqual([['ping', { n: 1 }]])
    expect(errors.length).toBeGreaterThan(0) // each loss is reported (at most once per 10 s)
  } finally {
    await Promise.all([bus.close(), other.close()])
  }
}, 60_000)
