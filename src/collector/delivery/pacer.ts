/**
 * Durable mode: how many attempts a process makes at once. Up to `concurrency`; but while this
 * process is taking requests in (one being added to the queue server now, or one accepted within
 * the last `quietMs`) AND its event loop is saturated (the CPU is the limit, not the receivers),
 * only `busy` of them (default one), so answering senders comes first. An attempt costs more
 * CPU than accepting its message (an HTTP request and its job's bookkeeping, against a share of
 * one queue write), so every attempt made during a burst is ingest taken away; one at a time
 * keeps deliveries moving, never starved. Deliveries are safe in the queue server meanwhile, and
 * the work is the same: the last delivery lands about as soon, while ingest is answered sooner. A
 * backlog that grows under steady load meets `maxPendingDeliveries`: a request answered 503 is
 * not taken in, so attempts go back to full concurrency within `quietMs` and the backlog drains.
 * With slow receivers the loop is not saturated: nothing is held back.
 */
export class Pacer {
  #active = 0
  /** Requests being added to the queue server now. */
  #ingesting = 0
  #waiting: Array<() => void> = []
  #lastIngestAt = Number.NEGATIVE_INFINITY
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly concurrency: number,
    private readonly saturated: () => boolean = eventLoopSaturated(),
    private readonly busy = 1,
    private readonly quietMs = 50,
  ) {}

  /** A request's deliveries are being added to the queue server (a write can take a while under load). */
  ingestStarted(): void {
    this.#ingesting++
  }

  /** That write is over: `accepted` when the deliveries are in the queue server (not refused, not failed). */
  ingestEnded(accepted: boolean): void {
    this.#ingesting--
    if (accepted) this.#lastIngestAt = Date.now()
    this.#pump()
  }

  /** Resolves when an attempt may start; call `release()` once it has finished. */
  admit(): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#active < this.#limit()) {
      this.#active++
      return undefined
    }
    return new Promise((resolve) => {
      this.#waiting.push(resolve)
      this.#pump()
    })
  }

  release(): void {
    this.#active--
    this.#pump()
  }

  /**
   * Resolves when an attempt could start (in its place in the line), without keeping a place:
   * work that leads to attempts (a batch job's de-duplication claims, a queue server round trip)
   * waits here, so it is not done while ingest has the loop.
   */
  turn(): Promise<void> | undefined {
    const admitted = this.admit()
    if (admitted === undefined) return void this.release()
    return admitted.then(() => this.release())
  }

  #limit(): number {
    const ingesting = this.#ingesting > 0 || Date.now() - this.#lastIngestAt < this.quietMs
    return ingesting && this.saturated() ? this.busy : this.concurrency
  }

  #pump(): void {
    while (this.#waiting.length > 0 && this.#active < this.#limit()) {
      this.#active++
      this.#waiting.shift()!()
    }
    // Held back by ingest: look again once it may have paused.
    if (this.#waiting.length > 0 && this.#active < this.concurrency && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        this.#pump()
      }, this.quietMs)
      ;(this.#timer as { unref?: () => void }).unref?.()
    }
  }
}

interface Utilization {
  idle: number
  active: number
  utilization: number
}

/**
 * Whether this process's event loop was busy at least 80 % of the last 100 ms (measured when
 * asked, at most every 100 ms). Where the runtime does not tell (no
 * `performance.eventLoopUtilization`), never.
 */
export function eventLoopSaturated(): () => boolean {
  const perf = (globalThis as { performance?: { eventLoopUtilization?: (a?: Utilization, b?: Utilization) => Utilization } }).performance
  const measure = perf?.eventLoopUtilization?.bind(perf)
  if (measure === undefined) return () => false
  let last = measure()
  let at = Date.now()
  let saturated = false
  return () => {
    const now = Date.now()
    if (now - at >= 100) {
      const current = measure()
      saturated = measure(current, last).utilization >= 0.8
      last = current
      at = now
    }
    return saturated
  }
}
