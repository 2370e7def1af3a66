/**
 * `MemoryQueue`: the embedded default. Each source has a lane: deliveries wait in a FIFO and at
 * most `concurrency` of them are with the source's `WebhookDestination` at once (so a burst never
 * opens thousands of sockets), at most `maxPending` are held in all (past that, `enqueue` says no
 * and ingest answers 503), and the destination's own in-memory schedule retries them. As in the
 * durable mode, a first attempt waits for its source's `Pacer`: while that source's requests are
 * being taken in and the event loop is saturated, one attempt at a time (at most 200 a second),
 * so senders are answered first (a retry, already scheduled by the destination, does not wait).
 * Everything lives in this process: what is still held when it stops is reported as not
 * delivered.
 */
import type { Logger } from '../../logger.js'
import type { DeliveryResult, WebhookDestination } from '../../webhooks/index.js'
import { cancelRequests } from '../../webhooks/destination.js'
import type { DeliveryTally } from '../stats.js'
import { settlesWithin } from '../settles-within.js'
import { Pacer } from './pacer.js'
import { keptPayload, type KeptStore } from '../replay/kept.js'
import type { BacklogCounts, DeliveryQueue, DrainOutcome, EnqueueOptions, QueuedDelivery } from './queue.js'

interface Item {
  delivery: QueuedDelivery
  /** When it was queued (ms since the epoch): kept for replay with it (unless a replay's). */
  at: number
  retrying: boolean
  /** Holds a place in the pacer (its first attempt, until it settles or waits for a retry). */
  paced: boolean
}

class Lane {
  #waiting: Item[] = []
  #head = 0
  readonly active = new Map<object, Item>()
  /**
   * The trace of each delivery by its label, while its destination may still speak of it: a URL
   * still answering when another one delivered reports its outcome after the delivery settled.
   */
  readonly #traces = new WeakMap<object, NonNullable<QueuedDelivery['trace']>>()
  retrying = 0
  closed = false
  /** This source's first attempts wait here while its ingest saturates the event loop. */
  readonly pacer: Pacer
  /** The next delivery waits for the pacer's place (ingest has the event loop). */
  #admitting = false

  /** Earlier destinations (settings changed) that may still hold deliveries. */
  readonly retired = new Set<WebhookDestination>()

  constructor(
    readonly source: string,
    public destination: WebhookDestination,
    private readonly queue: MemoryQueue,
  ) {
    this.pacer = queue.pacerFor(source)
    this.#listen(destination)
  }

  /** The next deliveries go to `destination`; the current one finishes what it holds. */
  replace(destination: WebhookDestination): void {
    this.retired.add(this.destination)
    this.destination = destination
    this.#listen(destination)
  }

  #listen(destination: WebhookDestination): void {
    destination.on('attempt', ({ payload, attempt, urls }) => this.active.get(payload)?.delivery.trace?.attempt(attempt, urls))
    destination.on('retry', ({ payload, attempt, delayMs, error, results }) => {
      this.queue.tally.retried(this.source)
      const item = this.active.get(payload)
      if (item && !item.retrying) {
        item.retrying = true
        this.retrying++
      }
      // Waiting for its retry, it is not using the loop: its place goes to the next delivery.
      if (item) this.#unpace(item)
      item?.delivery.trace?.retry(attempt, results, delayMs)
      this.queue.log(`${this.source}: attempt ${attempt} failed (${error.message}); retry in ${delayMs} ms`)
    })
    destination.on('late', ({ payload, ...result }) => this.#traces.get(payload)?.late(result))
  }

  get pending(): number {
    return this.#waiting.length - this.#head + this.active.size
  }

  push(delivery: QueuedDelivery): void {
    // The time only where it is kept (with an admin token): no clock read per delivery otherwise.
    this.#waiting.push({ delivery, at: this.queue.kept ? (delivery.acceptedAt ?? Date.now()) : 0, retrying: false, paced: false })
  }

  /** Starts waiting deliveries: up to `concurrency` with the destination, each admitted by the pacer. */
  pump(): void {
    const { concurrency } = this.queue
    const { pacer } = this
    while (!this.#admitting && this.active.size < concurrency && this.#head < this.#waiting.length) {
      const admitted = pacer.admit()
      if (admitted !== undefined) {
        this.#admitting = true
        void admitted.then(() => {
          this.#admitting = false
          // Abandoned meanwhile (the queue closed): the place goes back unused.
          if (this.active.size < concurrency && this.#head < this.#waiting.length) this.#start()
          else pacer.release()
          this.pump()
        })
        return
      }
      this.#start()
    }
  }

  /** Hands the next waiting delivery to the destination; it holds the pacer's place it was given. */
  #start(): void {
    const item = this.#waiting[this.#head++]
    item.paced = true
    if (this.#head > 1024 && this.#head * 2 > this.#waiting.length) {
      this.#waiting = this.#waiting.slice(this.#head)
      this.#head = 0
    }
    // The object that labels this delivery in the destination's events.
    const label = { type: item.delivery.type }
    this.active.set(label, item)
    if (item.delivery.trace) this.#traces.set(label, item.delivery.trace)
    void this.destination.deliverSerialized(item.delivery.body, label, item.delivery.urls).then((result) => {
      this.active.delete(label)
      this.#unpace(item)
      if (!result.delivered) this.queue.log(`${this.source}: ${item.delivery.type} failed: ${result.error?.message ?? 'unknown'}`)
      this.settle(item, result.delivered, result.results)
      this.pump()
    })
  }

  #unpace(item: Item): void {
    if (!item.paced) return
    item.paced = false
    this.pacer.release()
  }

  /** A request brought deliveries for this source: taken in, or refused (its backlog is full). */
  ingested(outcome: 'accepted' | 'refused'): void {
    this.pacer.ingestStarted()
    this.pacer.ingestEnded(outcome)
  }

  /** Fails every delivery that never reached the destination. */
  abandon(): void {
    const abandoned = this.#waiting.slice(this.#head)
    this.#waiting = []
    this.#head = 0
    for (const item of abandoned) this.settle(item, false)
  }

  settle(item: Item, delivered: boolean, results: DeliveryResult['results'] = []): void {
    if (item.retrying) this.retrying--
    item.delivery.trace?.settled(delivered, results)
    if (delivered) this.queue.tally.forwarded(this.source)
    else this.queue.tally.failed(this.source)
    if (!delivered && this.queue.cutOff) this.queue.notDelivered++
    else if (this.queue.kept) this.queue.kept.keep([keptPayload(this.source, item.delivery.body, item.at, !delivered)])
    item.delivery.onSettled?.(delivered)
    if (this.pending === 0) this.queue.laneIdle()
  }
}

export class MemoryQueue implements DeliveryQueue {
  readonly durable = false
  readonly #lanes = new Map<string, Lane>()
  readonly #maxPending: number
  readonly concurrency: number
  /** Makes each source's pacer (see `Pacer`). */
  readonly pacerFor: (source: string) => Pacer
  readonly tally: DeliveryTally
  readonly log: Logger
  /** Where settled payloads are kept for replay (with an admin token). */
  readonly kept: KeptStore | undefined
  #idle: Array<() => void> = []
  /** Set once the drain's bound is reached: what fails from then on is counted in `notDelivered`. */
  cutOff = false
  notDelivered = 0
  #closing: Promise<DrainOutcome> | undefined

  constructor(options: {
    destinations: ReadonlyMap<string, WebhookDestination>
    concurrency: number
    maxPending: number
    tally: DeliveryTally
    log: Logger
    /**
     * Each source's pacer. Default: one per source, so a source whose receiver is slow holds back
     * no other source's deliveries.
     */
    pacerFor?: (source: string) => Pacer
    /** Where settled payloads are kept for replay. */
    kept?: KeptStore
  }) {
    this.concurrency = options.concurrency
    this.pacerFor = options.pacerFor ?? (() => new Pacer(options.concurrency))
    this.#maxPending = options.maxPending
    this.tally = options.tally
    this.log = options.log
    this.kept = options.kept
    for (const [source, destination] of options.destinations) this.#lanes.set(source, new Lane(source, destination, this))
  }

  enqueue(deliveries: readonly QueuedDelivery[], options?: EnqueueOptions): boolean {
    if (deliveries.length === 0) return true
    const lanes = new Map<Lane, number>()
    for (const d of deliveries) {
      const lane = this.#lane(d.source)
      lanes.set(lane, (lanes.get(lane) ?? 0) + 1)
    }
    if (!options?.ignoreLimit) {
      for (const [lane, count] of lanes) {
        // A request larger than the whole limit is taken when nothing is pending: refused, it
        // would be refused for ever while its sender retried as told.
        if (lane.pending > 0 && lane.pending + count > this.#maxPending) {
          lane.ingested('refused')
          return false
        }
      }
    }
    if (this.#closing !== undefined) {
      // Refused after close: never held, so failed at once (and counted).
      for (const d of deliveries) {
        this.tally.failed(d.source)
        d.onSettled?.(false)
      }
      return true
    }
    for (const d of deliveries) this.#lane(d.source).push(d)
    for (const lane of lanes.keys()) {
      lane.ingested('accepted')
      lane.pump()
    }
    return true
  }

  setDestination(source: string, destination: WebhookDestination): void {
    const lane = this.#lanes.get(source)
    if (lane === undefined) this.#lanes.set(source, new Lane(source, destination, this))
    else lane.replace(destination)
  }

  counts(source?: string): BacklogCounts {
    let pending = 0
    let retrying = 0
    for (const lane of this.#lanes.values()) {
      if (source !== undefined && lane.source !== source) continue
      pending += lane.pending
      retrying += lane.retrying
    }
    return { pending, retrying }
  }

  close(timeoutMs: number): Promise<DrainOutcome> {
    this.#closing ??= this.#drain(timeoutMs)
    return this.#closing
  }

  /** Called by a lane that has become empty. */
  laneIdle(): void {
    if (this.counts().pending > 0) return
    const waiters = this.#idle
    this.#idle = []
    for (const resolve of waiters) resolve()
  }

  #whenIdle(): Promise<void> {
    if (this.counts().pending === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  async #drain(timeoutMs: number): Promise<DrainOutcome> {
    // Bounded, and the process lives until it reports (a ref'd timer).
    const drained = await settlesWithin(this.#whenIdle(), timeoutMs)
    // From here, every delivery still held fails: count exactly those (an attempt that lands
    // while its destination closes may still succeed), so the report matches the stats.
    this.cutOff = true
    for (const lane of this.#lanes.values()) {
      lane.closed = true
      lane.abandon()
    }
    const destinations = [...this.#lanes.values()].flatMap((lane) => [lane.destination, ...lane.retired])
    const closed = Promise.all(destinations.map((d) => d.close()))
    // Requests still on the wire are not waited for (their `timeout` may be far past the bound):
    // cancelled, their deliveries fail now, counted with the rest.
    for (const destination of destinations) cancelRequests(destination)
    await closed
    await this.#whenIdle()
    return { drained, pending: this.notDelivered }
  }

  #lane(source: string): Lane {
    const lane = this.#lanes.get(source)
    if (lane === undefined) throw new Error(`No Webhooks destination for source ${JSON.stringify(source)}.`)
    return lane
  }
}
