/**
 * `startServer` listens once the collector is ready (here: its saved settings loaded), so that no
 * sender pays for the start-up; past `READY_TIMEOUT_MS` it reports that and listens anyway.
 * Real sockets; fake timers only for the bound.
 */
import { connect } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, startServer, type CollectorServer } from '../../../src/collector/index.js'
import { READY_TIMEOUT_MS } from '../../../src/collector/server/server.js'
import { KEY, basic, track } from '../helpers.js'

/** A settings store whose saved settings arrive when the test says so. */
function slowStore() {
  let release: () => void = () => {}
  const loaded = new Promise<void>((resolve) => (release = resolve))
  const store = { kind: 'file' as const, durable: true, save: async () => true, load: () => loaded.then(() => ({})) }
  return { store, release }
}

/** Whether something accepts connections on `port` (loopback). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => (socket.destroy(), resolve(true)))
    socket.once('error', () => resolve(false))
  })
}

/** A port that was free a moment ago. */
async function freePort(): Promise<number> {
  const probe = await startServer(() => Promise.resolve(new Response(null)), { port: 0 })
  await probe.close()
  return probe.port
}

const post = (url: string) =>
  fetch(`${url}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basic(KEY) }, body: JSON.stringify({ batch: [track()] }) })

describe('startServer and the collector starting up', () => {
  let server: CollectorServer | undefined
  afterEach(async () => {
    vi.useRealTimers()
    await server?.close()
    server = undefined
  })

  it('listens only once the collector is ready, then serves at once', async () => {
    const { store, release } = slowStore()
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], settings: store })
    const port = await freePort()
    let started = false
    const starting = startServer(collector, { port }).then((s) => ((started = true), (server = s)))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(started).toBe(false)
    expect(await listening(port)).toBe(false)
    release()
    await starting
    expect((await post(server!.url)).status).toBe(200)
    await collector.close()
  })

  it('a handler without readiness (anyone\'s fetch function) is served at once', async () => {
    server = await startServer(() => Promise.resolve(Response.json({ ok: true })), { port: 0 })
    expect(await (await fetch(server.url)).json()).toEqual({ ok: true })
  })

  it(`past ${READY_TIMEOUT_MS} ms it reports that the collector is not ready and listens anyway; requests wait for it`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    const { store, release } = slowStore()
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], settings: store })
    const errors: unknown[] = []
    let started = false
    const starting = startServer(collector, { port: 0, onError: (e) => errors.push(e) }).then((s) => ((started = true), (server = s)))
    await vi.advanceTimersByTimeAsync(READY_TIMEOUT_MS - 1)
    expect(started).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    await starting
    expect(errors).toHaveLength(1)
    expect(String(errors[0])).toMatch(/not ready after 10 s \(is its queue server reachable\?\); listening anyway/)
    vi.useRealTimers()
    let answered = false
    const answer = post(server!.url).then((r) => ((answered = true), r.status))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(answered).toBe(false)
    release()
    expect(await answer).toBe(200)
    await collector.close()
  })
})
