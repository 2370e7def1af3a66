/**
 * The bus: short notices that every collector process on one queue server hears (Redis pub/sub
 * on one channel, or PostgreSQL LISTEN/NOTIFY): a console settings change, and the console's
 * records (messages accepted, delivery attempts and outcomes). Notices published within 50 ms go
 * out together in one message; a process never hears its own.
 *
 * Delivery is at most once, in order per sender: a process that is not connected at that moment
 * misses what was said meanwhile (the settings themselves are read from the queue server; the
 * console's records are a view). PostgreSQL caps a notification at 8,000 bytes, so a message
 * holds as many notices as fit and a single notice larger than that is dropped (reported): the
 * publishers keep their notices small.
 *
 * The bus has its own connection(s) to the server, which the shared settings store uses too, so
 * it outlives the delivery queue's while the collector closes.
 */
import type { QueueServer } from '../config.js'
import { loadExactJson, parseExact, stringifyExact } from '../../message/exact-json.js'
import { oncePer } from '../once-per.js'
import { settlesWithin, valueWithin } from '../settles-within.js'
import { CLOSE_WAIT_MS, loadPg, loadRedis, pgOptions, quitRedis, REDIS_CLIENT_OPTIONS } from './drivers.js'

export type BusConnection =
  | { kind: 'redis'; redis: import('ioredis').Redis }
  | { kind: 'postgres'; query<R>(sql: string, values?: unknown[]): Promise<R[]> }

export type BusListener = (topic: string, data: unknown) => void

interface Transport {
  connection: BusConnection
  /** Bytes a message may hold at most. */
  limit: number
  send(text: string): Promise<void>
  close(): Promise<void>
}

/** Both servers accept this name (a PostgreSQL identifier: lowercase, no quoting needed). */
const CHANNEL = 'isomorphic_analytics_bus'
const FLUSH_MS = 50
/** PostgreSQL's notification payload limit is 8,000 bytes; room for the envelope. */
const POSTGRES_LIMIT = 7_800
const REDIS_LIMIT = 1_000_000

const encoder = new TextEncoder()
const byteLength = (text: string) => encoder.encode(text).length

export class QueueBus {
  /** This process's name on the bus (its own notices come back to it and are skipped). */
  readonly id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`
  readonly #listeners = new Set<BusListener>()
  readonly #report: (error: unknown) => void
  readonly #ready: Promise<Transport>
  #buffer: string[] = []
  #timer: ReturnType<typeof setTimeout> | undefined
  #sending: Promise<unknown> = Promise.resolve()
  /** Settles when the notices gathered now are sent. */
  #next: Promise<void> | undefined
  #resolveNext: (() => void) | undefined
  #closed = false
  /**
   * Drops the connections the transport made, at once, whether or not they ever connected:
   * `close` calls it when the transport never became ready (a server never reached), since
   * those clients retry for ever and would keep the process alive after `close`.
   */
  #drop: (() => void) | undefined
  /** `close` gave up on the transport: connections made from then on are dropped as they are made. */
  #abandoned = false
  readonly #reportable = oncePer(10_000)

  constructor(server: QueueServer, onError: (error: unknown) => void) {
    this.#report = onError
    const receive = (text: string) => this.#receive(text)
    const fail = (where: string) => (error: Error) => this.#fail(where, error)
    const hold = (drop: () => void) => (this.#abandoned ? drop() : void (this.#drop = drop))
    // Messages are parsed exactly (`parseExact`): its parser is loaded before listening.
    this.#ready = loadExactJson().then(() => (server.kind === 'redis' ? openRedis(server.url, receive, fail, hold) : openPostgres(server, receive, fail, hold, () => this.#closed)))
    this.#ready.catch((error: unknown) => this.#fail('connection', error as Error))
  }

  /** The bus's connection to the server (for the shared settings store). Rejects when it cannot connect. */
  async connection(): Promise<BusConnection> {
    return (await this.#ready).connection
  }

  /** Resolves once subscribed (notices published by others from then on are heard). */
  async ready(): Promise<void> {
    await this.#ready
  }

  /**
   * Tells every other process; `now` sends at once (with what is gathered), else within 50 ms.
   * Resolves once sent (or given up: a failure is reported, never thrown).
   */
  publish(topic: string, data: unknown, options: { now?: boolean } = {}): Promise<void> {
    if (this.#closed) return Promise.resolve()
    const sent = (this.#next ??= new Promise<void>((resolve) => (this.#resolveNext = resolve)))
    // Exact: a message's int64 values reach the other consoles digit for digit.
    this.#buffer.push(stringifyExact([topic, data], true))
    if (options.now) this.#flush()
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#flush(), FLUSH_MS)
      ;(this.#timer as { unref?: () => void }).unref?.()
    }
    return sent
  }

  /** Calls `listener` with each notice another process publishes; returns what stops it. */
  subscribe(listener: BusListener): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /** Sends what is gathered, then disconnects. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#flush()
    this.#closed = true
    this.#listeners.clear()
    // A queue server that is down answers neither the last notices nor a connection: bounded.
    await settlesWithin(this.#sending, CLOSE_WAIT_MS)
    const transport = (await valueWithin(this.#ready.catch(() => undefined), CLOSE_WAIT_MS))?.value
    if (transport !== undefined) return transport.close().catch(() => {})
    // Never connected (or not within the bound): nothing to say goodbye to, only retries to stop.
    this.#abandoned = true
    this.#drop?.()
  }

  #flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const notices = this.#buffer
    if (notices.length === 0) return
    this.#buffer = []
    const done = this.#resolveNext
    this.#next = this.#resolveNext = undefined
    this.#sending = this.#sending.then(async () => {
      const transport = await this.#ready
      for (const text of pack(this.id, notices, transport.limit, (size) => this.#fail('publish', new Error(`a notice of ${size} bytes is too large for the bus; dropped`)))) {
        await transport.send(text)
      }
    }).catch((error: unknown) => this.#fail('publish', error as Error)).finally(done)
  }

  #receive(text: string): void {
    let message: { p?: unknown; n?: unknown }
    try {
      message = parseExact(text).value as typeof message
    } catch {
      return this.#fail('receive', new Error('a message that is not JSON'))
    }
    if (message.p === this.id || !Array.isArray(message.n)) return
    for (const notice of message.n as unknown[]) {
      if (!Array.isArray(notice) || typeof notice[0] !== 'string') continue
      for (const listener of this.#listeners) {
        try {
          listener(notice[0], notice[1])
        } catch (error) {
          this.#report(error)
        }
      }
    }
  }

  /** A background failure: reported once per 10 s while it repeats. */
  #fail(where: string, error: Error): void {
    if (this.#closed) return
    const line = `${where}: ${error.message}`
    if (!this.#reportable(line)) return
    this.#report(new Error(`The collector's queue server bus, ${line}`, { cause: error }))
  }
}

/** Messages of at most `limit` bytes, each `{"p":id,"n":[notices…]}`; a notice too large alone is dropped. */
function pack(id: string, notices: readonly string[], limit: number, drop: (size: number) => void): string[] {
  const head = `{"p":${JSON.stringify(id)},"n":[`
  const room = limit - byteLength(head) - 2
  const messages: string[] = []
  let current: string[] = []
  let size = 0
  for (const notice of notices) {
    const bytes = byteLength(notice) + 1
    if (bytes > room) {
      drop(bytes)
      continue
    }
    if (size + bytes > room) {
      messages.push(`${head}${current.join(',')}]}`)
      current = []
      size = 0
    }
    current.push(notice)
    size += bytes
  }
  if (current.length > 0) messages.push(`${head}${current.join(',')}]}`)
  return messages
}

/** `hold` is handed a way to drop the connections at once, as soon as they exist (see `QueueBus#drop`). */
type Hold = (drop: () => void) => void

async function openRedis(url: string, receive: (text: string) => void, fail: (where: string) => (error: Error) => void, hold: Hold): Promise<Transport> {
  const Redis = await loadRedis()
  const redis = new Redis(url, REDIS_CLIENT_OPTIONS)
  const subscriber = redis.duplicate()
  hold(() => {
    redis.disconnect()
    subscriber.disconnect()
  })
  redis.on('error', fail('connection'))
  subscriber.on('error', fail('subscription'))
  subscriber.on('message', (channel: string, text: string) => channel === CHANNEL && receive(text))
  // ioredis subscribes again by itself after a reconnection.
  await subscriber.subscribe(CHANNEL)
  return {
    connection: { kind: 'redis', redis },
    limit: REDIS_LIMIT,
    send: async (text) => void (await redis.publish(CHANNEL, text)),
    close: () => quitRedis(redis, subscriber),
  }
}

/**
 * One client both listens and notifies; when it breaks, a new one replaces it a second later:
 * one, however many errors the broken client emits (pg emits two for one lost connection, and a
 * reconnection each would double the listeners at every restart of the server). Closing ends
 * every client made and not ended yet, one still connecting included (pg has no connect timeout:
 * a server that does not answer would hold it, and the process, for minutes).
 */
async function openPostgres(
  server: QueueServer,
  receive: (text: string) => void,
  fail: (where: string) => (error: Error) => void,
  hold: Hold,
  closed: () => boolean,
): Promise<Transport> {
  const { Client } = await loadPg(server)
  const clients = new Set<import('pg').Client>()
  const endAll = () => Promise.all([...clients].map((client) => (clients.delete(client), client.end().catch(() => {})))).then(() => {})
  hold(() => void endAll())
  let reconnecting = false
  const reconnect = () => {
    if (reconnecting || closed()) return
    reconnecting = true
    const later = () => (setTimeout(attempt, 1_000) as { unref?: () => void }).unref?.()
    const attempt = () => {
      if (closed()) return
      connect().then((next) => {
        reconnecting = false
        // Closed meanwhile: the new client goes too.
        if (closed()) void next.end().catch(() => {})
        else current = next
      }, (e: Error) => (fail('listener')(e), later()))
    }
    later()
  }
  const connect = async (): Promise<import('pg').Client> => {
    const client = new Client(pgOptions(server))
    clients.add(client)
    let listening = false
    let broken = false
    const drop = () => {
      broken = true
      clients.delete(client)
      void client.end().catch(() => {})
    }
    client.on('notification', (n) => n.channel === CHANNEL && n.payload !== undefined && receive(n.payload))
    client.on('error', (error) => {
      if (broken) return
      drop()
      // Not listening yet: `connect` rejects, and its caller decides.
      if (!listening) return
      fail('listener')(error)
      if (current === client) current = undefined
      reconnect()
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${CHANNEL}`)
    } catch (error) {
      if (!broken) drop()
      throw error
    }
    listening = true
    return client
  }
  let current: import('pg').Client | undefined = await connect()
  const client = () => {
    if (current === undefined) throw new Error('not connected to PostgreSQL (reconnecting)')
    return current
  }
  return {
    connection: { kind: 'postgres', query: async <R>(sql: string, values?: unknown[]) => (await client().query(sql, values)).rows as R[] },
    limit: POSTGRES_LIMIT,
    send: async (text) => void (await client().query('SELECT pg_notify($1, $2)', [CHANNEL, text])),
    close: endAll,
  }
}
