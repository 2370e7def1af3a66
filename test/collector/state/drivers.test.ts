/** The connection options BullMQ is given for a `queue` URL (src/collector/state/drivers.ts). */
import { describe, expect, it } from 'vitest'
import { bullmqConnection, reconnectDelay } from '../../../src/collector/state/drivers.js'

describe('bullmqConnection', () => {
  it('Redis: host and port (6379 when the URL has none), database 0 when it names none, no retry cap on commands (BullMQ requires it), a short disconnection', () => {
    expect(bullmqConnection({ kind: 'redis', url: 'redis://127.0.0.1:6380' })).toEqual({ host: '127.0.0.1', port: 6380, db: 0, maxRetriesPerRequest: null, disconnectTimeout: 100, retryStrategy: reconnectDelay })
    expect(bullmqConnection({ kind: 'redis', url: 'redis://queue.internal/' })).toEqual({ host: 'queue.internal', port: 6379, db: 0, maxRetriesPerRequest: null, disconnectTimeout: 100, retryStrategy: reconnectDelay })
  })

  it('Redis: decoded credentials, `/N` as the database, TLS for rediss:', () => {
    expect(bullmqConnection({ kind: 'redis', url: 'rediss://app%40eu:p%3Ass%2Fw@cache.example.com:6390/3' })).toEqual({
      host: 'cache.example.com',
      port: 6390,
      username: 'app@eu',
      password: 'p:ss/w',
      db: 3,
      tls: {},
      maxRetriesPerRequest: null,
      disconnectTimeout: 100,
      retryStrategy: reconnectDelay,
    })
    // A password alone (Redis before ACLs): no username.
    expect(bullmqConnection({ kind: 'redis', url: 'redis://:secret@127.0.0.1:6379' })).toEqual({ host: '127.0.0.1', port: 6379, password: 'secret', db: 0, maxRetriesPerRequest: null, disconnectTimeout: 100, retryStrategy: reconnectDelay })
  })

  it('Redis: reconnects within a second of the server coming back, however long it was away (BullMQ\'s own waits grow to 20 s)', () => {
    expect([1, 2, 5, 10, 11, 50, 1_000].map(reconnectDelay)).toEqual([100, 200, 500, 1_000, 1_000, 1_000, 1_000])
  })

  it('PostgreSQL: the URL as it is, and BullMQ creates its tables', () => {
    const url = 'postgres://user:pw@127.0.0.1:5432/analytics'
    expect(bullmqConnection({ kind: 'postgres', url })).toEqual({ connectionString: url, migrate: true })
  })
})
