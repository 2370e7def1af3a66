/**
 * The sockets of a collector's PostgreSQL connections, so that its `close()` can drop them.
 *
 * A PostgreSQL server that accepts connections and never answers (hung, or its processes
 * stopped) leaves pg waiting for ever, and each socket it waits on keeps the process alive: a
 * connection being made waits for the server's greeting, a query for its result, and the `end()`
 * of an idle client, its goodbye sent, for the server to close the socket. A pool's `end()` waits
 * for its clients in use. pg bounds none of this by default; its `connectionTimeoutMillis` and
 * `query_timeout` would also fail a slow connection or query while the server does answer.
 *
 * So every pg connection of the collector (BullMQ's pool and LISTEN client, through the
 * connection options BullMQ is given; the counters' pool; the bus's client) is made on a socket
 * from `stream` (pg's `stream` option: the same `net.Socket` pg makes itself, remembered until
 * it closes), and `drop()`, called only where the collector's `close()` stops waiting for the
 * server, destroys those still open. Their waits fail ("Connection terminated unexpectedly") and
 * nothing is left; what was not settled stays in the server, as when it goes away. A connection
 * made after `drop()` is destroyed as soon as it starts.
 */

/** `node:net`, loaded at run time like pg itself (see drivers.ts): this runs on Node only. */
const NET = 'node:net'

type Socket = import('node:net').Socket

export class PgSockets {
  readonly #open = new Set<Socket>()
  #dropped = false
  #Socket: typeof import('node:net').Socket | undefined

  /** Resolves once `stream` can be used: before any pg client is made. */
  readonly ready: Promise<void> = import(/* webpackIgnore: true */ /* @vite-ignore */ NET).then((net: typeof import('node:net')) => {
    this.#Socket = net.Socket
  })

  /** pg's `stream` option: a new socket, remembered while it is open. */
  readonly stream = (): Socket => {
    if (this.#Socket === undefined) throw new Error('PgSockets: `ready` has not resolved.')
    const socket = new this.#Socket()
    if (this.#dropped) {
      // Destroyed before connecting would connect all the same: destroyed as it starts instead.
      const connect = socket.connect.bind(socket) as (...args: unknown[]) => Socket
      socket.connect = ((...args: unknown[]) => connect(...args).destroy()) as Socket['connect']
      return socket
    }
    this.#open.add(socket)
    socket.once('close', () => this.#open.delete(socket))
    return socket
  }

  /** Whether `drop()` was called: the failures of these connections since are its own doing. */
  get dropped(): boolean {
    return this.#dropped
  }

  /** Destroys every socket still open, and every one made from now on. */
  drop(): void {
    this.#dropped = true
    for (const socket of this.#open) socket.destroy()
  }
}
