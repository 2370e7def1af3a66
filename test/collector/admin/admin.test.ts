import { describe, expect, it, vi } from 'vitest'
import { createCollector, ValidationError } from '../../../src/collector/index.js'
import { recordingFetch } from '../helpers.js'

const TOKEN = 'admin-secret-0123456789'

/** Three sources: `web` and `app` forward (to their own URL), `batch` has no destination. */
function setup(adminToken: string | null = TOKEN) {
  const receiver = recordingFetch()
  const collector = createCollector({
    sources: [
      { writeKey: 'K1', name: 'web', webhooks: { urls: [{ url: 'https://web.test/' }], sharedSecret: 's1' } },
      { writeKey: 'K2', name: 'app', webhooks: { urls: [{ url: 'https://app.test/' }] } },
      { writeKey: 'K3', name: 'batch' },
    ],
    fetch: receiver.fetch,
    ...(adminToken !== null && { adminToken }),
  })
  return { collector, calls: receiver.calls }
}

/** An audience payload as [userId, its one trait's value]. */
const change = (payload: { userId?: string; traits?: Record<string, unknown> }) => [payload.userId, Object.values(payload.traits ?? {})[0]]

/** What the receiver last heard of each user's trait. */
const latest = (calls: Array<{ json: Record<string, unknown> }>) =>
  Object.fromEntries(calls.map((c) => [c.json.userId, Object.values(c.json.traits as object)[0]]))

function admin(path: string, body: unknown, token: string | null = TOKEN): Request {
  return new Request(`http://c.test${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  })
}

describe('requestDeletion', () => {
  it('sends one delete payload per source with an enabled destination (default: all)', async () => {
    const { collector, calls } = setup()
    const dispatch = collector.requestDeletion({ userId: 'u1' })
    expect(dispatch.sources).toEqual(['web', 'app'])
    expect(await dispatch.settled).toEqual({ delivered: 2, failed: 0 })
    expect(calls.map((c) => c.url).sort()).toEqual(['https://app.test/', 'https://web.test/'])
    for (const call of calls) {
      expect(Object.keys(call.json).sort()).toEqual(['timestamp', 'type', 'userId'])
      expect(call.json).toMatchObject({ type: 'delete', userId: 'u1' })
      expect(call.json.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }
  })

  it('limits itself to the named sources', async () => {
    const { collector, calls } = setup()
    const dispatch = collector.requestDeletion({ userId: 'u1', sources: ['app', 'batch'] })
    expect(dispatch.sources).toEqual(['app'])
    await dispatch.settled
    expect(calls.map((c) => c.url)).toEqual(['https://app.test/'])
  })

  it.each<[unknown, string]>([
    [{}, 'userId'],
    [{ userId: '' }, 'userId'],
    [{ userId: '   ' }, 'userId'],
    [{ userId: '\t\n' }, 'userId'],
    [{ userId: 'u', sources: 'web' }, 'sources'],
    [{ userId: 'u', sources: ['web', 'nope'] }, 'sources[1]'],
  ])('refuses %j naming %s', (request, field) => {
    const { collector } = setup()
    expect(() => collector.requestDeletion(request as never)).toThrow(ValidationError)
    try {
      collector.requestDeletion(request as never)
    } catch (error) {
      expect((error as ValidationError).field).toBe(field)
    }
  })

  it('names the known sources when one is unknown', () => {
    expect(() => setup().collector.requestDeletion({ userId: 'u', sources: ['nope'] })).toThrow(
      'Unknown source `"nope"`; known: web, app, batch.',
    )
  })
})

describe('syncAudience', () => {
  it('sends every member true on the first sync, then only the changes', async () => {
    const { collector, calls } = setup()
    const first = await collector.syncAudience({ source: 'web', audience: 'High Value Users', members: ['u1', 'u2'] })
    expect(await first.settled).toEqual({ delivered: 2, failed: 0 })
    expect(calls.map((c) => [c.json.userId, c.json.traits])).toEqual([
      ['u1', { high_value_users: true }],
      ['u2', { high_value_users: true }],
    ])
    calls.length = 0
    const second = await collector.syncAudience({ source: 'web', audience: 'High Value Users', members: ['u2', 'u3'] })
    await second.settled
    const changes = Object.fromEntries(calls.map((c) => [c.json.userId, c.json.traits]))
    expect(changes).toEqual({ u1: { high_value_users: false }, u3: { high_value_users: true } })
    calls.length = 0
    await (await collector.syncAudience({ source: 'web', audience: 'High Value Users', members: ['u3', 'u2'] })).settled
    expect(calls).toHaveLength(0)
  })

  it('diffs a sync against the one awaited before it, though that one was not queued yet', async () => {
    const { collector, calls } = setup()
    const sync = (members: string[]) => collector.syncAudience({ source: 'web', audience: 'VIP', members })
    const first = await sync(['u1', 'u2'])
    const second = await sync(['u2'])
    expect(first.payloads.map(change)).toEqual([['u1', true], ['u2', true]])
    expect(second.payloads.map(change)).toEqual([['u1', false]])
    await Promise.all([first.settled, second.settled])
    expect((await sync(['u2'])).payloads).toEqual([])
    expect(latest(calls)).toEqual({ u1: false, u2: true })
  })

  it('runs syncs of one audience started together in turn, each from the membership the one before left', async () => {
    const { collector, calls } = setup()
    const sync = (source: string, members: string[]) => collector.syncAudience({ source, audience: 'VIP', members })
    const dispatches = await Promise.all([sync('web', ['u1', 'u2']), sync('web', ['u2']), sync('app', ['u9']), sync('web', ['u2', 'u3'])])
    expect(dispatches.map((d) => d.payloads.map(change))).toEqual([
      [['u1', true], ['u2', true]],
      [['u1', false]],
      [['u9', true]],
      [['u3', true]],
    ])
    await Promise.all(dispatches.map((d) => d.settled))
    expect(latest(calls.filter((c) => c.url === 'https://web.test/'))).toEqual({ u1: false, u2: true, u3: true })
  })

  it('keeps audiences apart per source', async () => {
    const { collector, calls } = setup()
    await (await collector.syncAudience({ source: 'web', audience: 'VIP', members: ['u1'] })).settled
    await (await collector.syncAudience({ source: 'app', audience: 'VIP', members: ['u1'] })).settled
    expect(calls.map((c) => c.url)).toEqual(['https://web.test/', 'https://app.test/'])
  })

  it('sends and remembers nothing for a source without a destination', async () => {
    const { collector, calls } = setup()
    const dispatch = await collector.syncAudience({ source: 'batch', audience: 'VIP', members: ['u1'] })
    expect(dispatch.payloads).toEqual([])
    expect(await dispatch.settled).toEqual({ delivered: 0, failed: 0 })
    expect(calls).toHaveLength(0)
  })

  it.each<[unknown, string]>([
    [{ audience: 'VIP', members: [] }, 'source'],
    [{ source: 'nope', audience: 'VIP', members: [] }, 'source'],
    [{ source: 'web', members: [] }, 'audience'],
    [{ source: 'web', audience: '!!!', members: [] }, 'audience'],
    [{ source: 'web', audience: 'VIP' }, 'members'],
    [{ source: 'web', audience: 'VIP', members: ['u1', 7] }, 'members[1]'],
  ])('refuses %j naming %s', async (request, field) => {
    const { collector } = setup()
    let caught: unknown
    try {
      await collector.syncAudience(request as never)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(ValidationError)
    expect((caught as ValidationError).field).toBe(field)
  })
})

describe('admin endpoints', () => {
  it('POST /v1/deletions forwards delete payloads', async () => {
    const { collector, calls } = setup()
    const response = await collector.fetch(admin('/v1/deletions', { userId: 'u1', sources: ['web'] }))
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ success: true, sources: ['web'], sent: 1 })
    await collector.close()
    expect(calls.map((c) => c.json)).toMatchObject([{ type: 'delete', userId: 'u1' }])
  })

  it('POST /v1/audiences sends the sync payloads', async () => {
    const { collector, calls } = setup()
    const response = await collector.fetch(admin('/v1/audiences', { source: 'app', audience: 'Churn Risk', members: ['u1'] }))
    expect(await response.json()).toEqual({ success: true, sources: ['app'], sent: 1 })
    await collector.close()
    expect(calls[0].json).toMatchObject({ type: 'identify', userId: 'u1', traits: { churn_risk: true } })
  })

  it.each<[string, Request, number]>([
    ['no token', admin('/v1/deletions', { userId: 'u1' }, null), 401],
    ['a wrong token', admin('/v1/deletions', { userId: 'u1' }, 'guess'), 401],
    ['a token that is a prefix', admin('/v1/deletions', { userId: 'u1' }, TOKEN.slice(0, -1)), 401],
    ['Basic auth', new Request('http://c.test/v1/deletions', { method: 'POST', headers: { authorization: `Basic ${btoa(`${TOKEN}:`)}` }, body: '{}' }), 401],
    ['an invalid body', admin('/v1/deletions', { userId: 42 }), 400],
    ['a whitespace-only userId', admin('/v1/deletions', { userId: '   ' }), 400],
    ['a whitespace-only audience member', admin('/v1/audiences', { source: 'app', audience: 'VIP', members: ['u1', '  '] }), 400],
    ['an unknown source', admin('/v1/audiences', { source: 'x', audience: 'VIP', members: [] }), 400],
    ['a GET', new Request('http://c.test/v1/audiences', { headers: { authorization: `Bearer ${TOKEN}` } }), 405],
  ])('answers %s with %i', async (_, request, status) => {
    const { collector, calls } = setup()
    const response = await collector.fetch(request)
    expect(response.status).toBe(status)
    if (status === 401) expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/)
    await collector.close()
    expect(calls).toHaveLength(0)
  })

  it('names the field of an invalid admin body', async () => {
    const { collector } = setup()
    const response = await collector.fetch(admin('/v1/audiences', { source: 'web', audience: 'VIP', members: 'u1' }))
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'VALIDATION', field: 'members' } })
    const blank = await collector.fetch(admin('/v1/audiences', { source: 'app', audience: 'VIP', members: ['u1', '  '] }))
    expect(await blank.json()).toMatchObject({ error: { field: 'members[1]', message: 'Expected `members[1]` to be a non-empty string (not only whitespace), got `"  "`.' } })
  })

  it('does not exist without an admin token (404, saying how to enable it)', async () => {
    const { collector } = setup(null)
    const deletions = await collector.fetch(admin('/v1/deletions', { userId: 'u1' }))
    expect(deletions.status).toBe(404)
    expect(await deletions.json()).toMatchObject({ error: { code: 'NOT_FOUND', message: expect.stringMatching(/^No endpoint at \/v1\/deletions: the admin endpoints are enabled by an admin token \(`adminToken`, `--admin-token`\)\.$/) } })
    expect((await collector.fetch(admin('/v1/audiences', { source: 'web', audience: 'VIP', members: [] }))).status).toBe(404)
    const other = await collector.fetch(admin('/v1/nothing', {}))
    expect(await other.json()).toMatchObject({ error: { message: 'No endpoint at /v1/nothing.' } })
  })
})

describe('close() with admin payloads waiting for room (memory)', () => {
  it('queues them for the drain: its report counts them among the deliveries not made', async () => {
    vi.useFakeTimers()
    try {
      // A receiver that never answers (until the drain cancels the request), one delivery at most.
      const hanging: typeof fetch = (_, init) => new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)))
      const collector = createCollector({ sources: [{ writeKey: 'K1', name: 'web', webhooks: { urls: [{ url: 'https://web.test/' }] } }], fetch: hanging, maxPendingDeliveries: 1 })
      const track = new Request('http://c.test/v1/track', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('K1:')}` }, body: '{"event":"E","userId":"u"}' })
      expect((await collector.fetch(track)).status).toBe(200)
      const dispatch = collector.requestDeletion({ userId: 'gone' })
      await vi.advanceTimersByTimeAsync(1_000)
      const closing = collector.close(500)
      await vi.advanceTimersByTimeAsync(1_000)
      const report = await closing
      expect(report.pending).toBe(2)
      expect(report.stats.failed).toBe(2)
      expect(await dispatch.settled).toEqual({ delivered: 0, failed: 1 })
    } finally {
      vi.useRealTimers()
    }
  })
})
