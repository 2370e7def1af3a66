/**
 * The deliveries of one source: payloads wait in a FIFO and at most `concurrency` of them are
 * with the `WebhookDestination` at once (so a burst never opens thousands of sockets), at most
 * `maxPending` are held in all (past that, ingest answers 503 and the sender retries later), and
 * every one is counted: forwarded, failed, retrying (waiting for a retry after a failed attempt).
 */
import type { Logger } from '../logger.js'
import type { WebhookDestination, WebhookPayload } from '../webhooks/index.js'

export interface DeliveryCounters {
  forwarded: number
  failed: number
  /** Retry events (one per failed attempt that will be retried). */
  retries: number
}

interface Item {
  payload: WebhookPayload
  resolve: (delivered: boolean) => void
  retrying: boolean
}

export class DeliveryQueue {
  readonly #destination: WebhookDestination
  readonly #concurrency: number
  readonly #maxPending: number
  readonly #counters: DeliveryCounters
  readonly #log: Logger
  readonly #source: string
  #waiting: Item[] = []
  #head = 0
  readonly #active = new Map<object, Item>()
  #retrying = 0
  #idle: Array<() => void> = []
  #closed = false

  constructor(options: {
    destination: WebhookDestination
    concurrency: number
    maxPending: number
    counters: DeliveryCounters
    log: Logger
    source: string
  }) {
    this.#destination = options.destination
    this.#concurrency = options.concurrency
    this.#maxPending = options.maxPending
    this.#counters = options.counters
    this.#log = options.log
    this.#source = options.source
    this.#destination.on('retry', ({ payload, attempt, delayMs, error }) => {
      this.#counters.retries++
      const item = this.#active.get(payload)
      if (item && !item.retrying) {
        item.retrying = true
        this.#retrying++
      }
      this.#log(`${this.#source}: attempt ${attempt} failed (${error.message}); retry in ${delayMs} ms`)
    })
  }

  /** Payloads waiting or with the destination. */
  get pending(): number {
    return this.#waiting.length - this.#head + this.#active.size
  }

  /** Payloads whose last attempt failed and that wait for their next one. */
  get retrying(): number {
    return this.#retrying
  }

  /** Whether `count` more payloads fit under `maxPending`. */
  hasRoom(count: number): boolean {
    return this.pending + count <= this.#maxPending
  }

  /** Queues a payload; resolves with whether it was delivered. Never rejects. */
  push(payload: WebhookPayload): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      if (this.#closed) {
        this.#counters.failed++
        return resolve(false)
      }
      this.#waiting.push({ payload, resolve, retrying: false })
      this.#pump()
    })
  }

  /** Resolves once nothing is pending. */
  whenIdle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  /**
   * Stops: payloads that never reached the destination fail, pending retries are cancelled (the
   * destination resolves them as failed). Resolves once every payload has settled.
   */
  async close(): Promise<void> {
    this.#closed = true
    const abandoned = this.#waiting.slice(this.#head)
    this.#waiting = []
    this.#head = 0
    for (const item of abandoned) this.#settle(item, false)
    await this.#destination.close()
    await this.whenIdle()
  }

  #pump(): void {
    while (this.#active.size < this.#concurrency && this.#head < this.#waiting.length) {
      const item = this.#waiting[this.#head++]
      if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
        this.#waiting = this.#waiting.slice(this.#head)
        this.#head = 0
      }
      this.#active.set(item.payload, item)
      void this.#destination.deliver(item.payload).then((result) => {
        this.#active.delete(item.payload)
        if (!result.delivered) this.#log(`${this.#source}: ${item.payload.type} failed: ${result.error?.message ?? 'unknown'}`)
        this.#settle(item, result.delivered)
        this.#pump()
      })
    }
  }

  #settle(item: Item, delivered: boolean): void {
    if (item.retrying) this.#retrying--
    if (delivered) this.#counters.forwarded++
    else this.#counters.failed++
    item.resolve(delivered)
    if (this.pending === 0) {
      const waiters = this.#idle
      this.#idle = []
      for (const resolve of waiters) resolve()
    }
  }
}
