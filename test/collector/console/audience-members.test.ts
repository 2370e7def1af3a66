/**
 * `GET /v1/admin/audiences?source=&audience=`: an audience's members as its last sync left them,
 * which the console's confirmation of a sync names.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

describe('GET /v1/admin/audiences', () => {
  it("answers an audience's members after each sync, and names a missing field or an unknown source", async () => {
    const { collector } = consoleCollector()
    const members = async () => (await json(collector, admin('/v1/admin/audiences?source=web&audience=Power%20Users'))).body
    expect(await members()).toEqual({ source: 'web', audience: 'Power Users', synced: false, members: [] })
    await collector.syncAudience({ source: 'web', audience: 'Power Users', members: ['ada', 'bob'] })
    expect(await members()).toEqual({ source: 'web', audience: 'Power Users', synced: true, members: ['ada', 'bob'] })
    await collector.syncAudience({ source: 'web', audience: 'Power Users', members: [] })
    expect(await members()).toEqual({ source: 'web', audience: 'Power Users', synced: true, members: [] })

    expect(await json(collector, admin('/v1/admin/audiences?source=web'))).toMatchObject({
      status: 400, body: { error: { field: 'audience', message: 'Expected `audience` to be a non-empty string, got none.' } },
    })
    expect(await json(collector, admin('/v1/admin/audiences?source=nope&audience=A'))).toMatchObject({
      status: 400, body: { error: { field: 'source', message: 'Unknown source "nope"; known: web, app.' } },
    })
    expect((await collector.fetch(admin('/v1/admin/audiences?source=web&audience=A', { token: 'wrong' }))).status).toBe(401)
    expect((await collector.fetch(admin('/v1/admin/audiences?source=web&audience=A', { method: 'POST' }))).status).toBe(405)
  })
})
