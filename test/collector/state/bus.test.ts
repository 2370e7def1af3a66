/**
 * `QueueBus.close()` ends the connections the bus made even when they never became ready: a
 * queue server that accepts connections and never answers (as a host that hangs would) holds
 * them open, and with them the process. Its own, not the queue server's: a loopback TCP server
 * that stays silent, so the bus's clients wait for a first reply that never comes.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { QueueBus } from '../../../src/collector/state/bus.js'
import { until } from '../durable/support.js'

let server: Server | undefined
afterEach(() => {
  server?.close()
  server = undefined
})

/** A server that takes connections and never says a word; `open`: the connections still open. */
async function silentServer(): Promise<{ port: number; open: Set<Socket>; connected: () => number }> {
  const open = new Set<Socket>()
  let connected = 0
  server = createServer((socket) => {
    connected++
    open.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => open.delete(socket))
    // Reads (and ignores) what it is sent, so that it sees the client hang up.
    socket.resume()
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, open, connected: () => connected }
}

describe('QueueBus.close() with a queue server that never answers', () => {
  for (const kind of ['redis', 'postgres'] as const) {
    it(`${kind}: ends the connections still waiting for their first reply`, async () => {
      const silent = await silentServer()
      const url = kind === 'redis' ? `redis://127.0.0.1:${silent.port}` : `postgres://postgres@127.0.0.1:${silent.port}/postgres`
      const bus = new QueueBus({ kind, url }, () => {})
      // Redis: a client and its subscriber; PostgreSQL: the one listening client.
      const clients = kind === 'redis' ? 2 : 1
      await until(() => silent.connected() === clients, `${clients} connection(s)`)
      await bus.close()
      await until(() => silent.open.size === 0, 'the connections closed', 2_000, () => silent.open.size)
      expect(silent.connected()).toBe(clients)
    })
  }
})
