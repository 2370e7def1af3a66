/** The connection options BullMQ is given for a `queue` URL (src/collector/state/drivers.ts). */
import { describe, expect, it } from 'vitest'
import { bullmqConnection } from '../../../src/collector/state/drivers.js'

describe('bullmqConnection', () => {
  it('Redis: host and port (6379 when the URL has none), no retry cap on commands (BullMQ requires it), a short disconnection', () => {
    expect(bullmqConnection({ kind: 'redis', url: 'redis://127.0.0.1:6380' })).toEqual({ host: '127.0.0.1', port: 6380, maxRetriesPerRequest: null, disconnectTimeout: 100 })
    expect(bullmqConnection({ kind: 'redis', url: 'redis://queue.internal' })).toEqual({ host: 'queue.internal', port: 6379, maxRetriesPerRequest: null, disconnectTimeout: 100 })
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
    })
    // A password alone (Redis before ACLs): no username.
    expect(bullmqConnection({ kind: 'redis', url: 'redis://:secret@127.0.0.1:6379' })).toEqual({ host: '127.0.0.1', port: 6379, password: 'secret', maxRetriesPerRequest: null, disconnectTimeout: 100 })
  })

  it('PostgreSQL: the URL as it is, and BullMQ creates its tables', () => {
    const url = 'postgres://user:pw@127.0.0.1:5432/analytics'
    expect(bullmqConnection({ kind: 'postgres', url })).toEqual({ connectionString: url, migrate: true })
  })
})
