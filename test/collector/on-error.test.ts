/**
 * An `onError` that throws: what it throws is printed (console.error) with the error it was
 * reporting, and never reaches the collector. It made `collector.fetch` reject instead of
 * answering 500, and, called from BullMQ's `error` event with the queue server unreachable, it
 * crashed the process. And nothing reaches it once `close()` resolved. Real sockets: a closed
 * loopback port (or one that never answers) as the queue server, a Node server.
 */
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, startServer, type Collector } from '../../src/collector/index.js'
import { freePort } from '../helpers/queue-servers.js'
import { KEY, post } from './helpers.js'

const blewUp = (what: string) => () => {
  throw new Error(`onError blew up (${what})`)
}

/** The console.error calls saying onError threw, as [thrown, reported]. */
function throwsPrinted(spy: ReturnType<typeof vi.spyOn>): Array<[Error, Error]> {
  return spy.mock.calls
    .filter((call: unknown[]) => call[0] === 'isomorphic-analytics collector: onError threw' || call[0] === 'isomorphic-analytics server: onError threw')
    .map((call: unknown[]) => [call[1] as Error, call[3] as Error])
}

describe('an onError that throws', () => {
  let collector: Collector | undefined
  afterEach(async () => {
    await collector?.close(100)
    collector = undefined
    vi.restoreAllMocks()
  })

  it('collector.fetch still answers 500, and the throw is printed with the error it reported', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], onError: blewUp('fetch') })
    const request = post({ batch: [] })
    Object.defineProperty(request, 'url', { get: () => { throw new Error('boom') } })
    const response = await collector.fetch(request)
    expect(response.status).toBe(500)
    expect(await response.json()).toEqual({ success: false, error: { code: 'INTERNAL', message: 'Internal server error.' } })
    expect(throwsPrinted(printed).map(([thrown, reported]) => [thrown.message, reported.message])).toEqual([['onError blew up (fetch)', 'boom']])
  })

  it('with the queue server unreachable, the process goes on: each report that threw is printed', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    const reported: unknown[] = []
    collector = createCollector({
      sources: [{ writeKey: KEY, name: 'web' }],
      queue: `redis://127.0.0.1:${await freePort()}`,
      onError: (error) => {
        reported.push(error)
        throw new Error('onError blew up (queue)')
      },
    })
    await expect.poll(() => throwsPrinted(printed).length, { timeout: 10_000 }).toBeGreaterThan(0)
    const [thrown, error] = throwsPrinted(printed)[0]
    expect(thrown.message).toBe('onError blew up (queue)')
    expect(reported).toContain(error)
    expect(error.message).toMatch(/ECONNREFUSED/)
  })

  it('nothing reaches onError once close() resolved: a Redis that accepts connections and never answers, its bus dropped at close', async () => {
    // Dropped at close, the bus's connection rejects what waited on it a moment later: the
    // saved settings' load then failed, and was reported after close() had resolved.
    const accepted = new Set<Socket>()
    const silent = createNetServer((socket) => void accepted.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const reported: string[] = []
    try {
      collector = createCollector({
        sources: [{ writeKey: KEY, name: 'web' }],
        queue: `redis://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        onError: (error) => reported.push(String(error)),
      })
      await collector.close(0)
      const atClose = reported.length
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expect(reported.slice(atClose)).toEqual([])
    } finally {
      for (const socket of accepted) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  })

  it("startServer's onError: a handler's failure is still answered 500, and the server keeps serving", async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    let calls = 0
    const handler = async () => {
      if (++calls === 1) throw new Error('handler bug')
      return new Response('fine')
    }
    const server = await startServer(handler, { port: 0, onError: blewUp('server') })
    try {
      const first = await fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(5_000) })
      expect(first.status).toBe(500)
      expect(throwsPrinted(printed).map(([thrown, reported]) => [thrown.message, reported.message])).toEqual([['onError blew up (server)', 'handler bug']])
      expect(await (await fetch(`${server.url}/v1/batch`, { method: 'POST', body: '{}' })).text()).toBe('fine')
    } finally {
      await server.close()
    }
  })
})
