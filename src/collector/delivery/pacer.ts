/**
 * How many delivery attempts a process makes at once, in both modes. Up to `concurrency`; but
 * while this process is taking requests in (one being added to the queue server now, or one
 * accepted within the last `quietMs`) AND its event loop is saturated (the CPU is the limit, not
 * the receivers), only `busy` of them (default one), each starting at least `spacingMs` (5 ms)
 * after the one before, so answering senders comes first. An attempt costs more CPU than
 * accepting its message (an HTTP request and its bookkeeping, against a share of one request's
 * parse or queue write), so every attempt made during a burst is ingest taken away. Up to 200
 * attempts a second keep deliveries moving, never starved; one at a time without the spacing
 * took about a quarter of a durable collector's CPU during a burst (bench/durable.mjs; the
 * figures are in docs/performance.md). The work is the same: the last delivery lands about as
 * soon, while ingest is answered sooner. A backlog that grows under steady load meets
 * `maxPendingDeliveries`: from a request answered 503 until `overloadMs` after the last one,
 * attempts go at full concurrency and the backlog drains (the senders are being refused anyway:
 * what is accepted is what deliveries make room for). With slow receivers the loop is not
 * saturated: nothing is held back. (Durable mode paces every attempt and a batch
 * job's claims; memory mode, each delivery's first attempt, its retries being the destination's.)
 */
export class Pacer {
  #active = 0
  /** Requests being added to the queue server now. */
  #ingesting = 0
  #waiting: Array<() => void> = []
  #lastIngestAt = Number.NEGATIVE_INFINITY
  #lastRefusedAt = Number.NEGATIVE_INFINITY
  /** When the last attempt held back to `busy` started. */
  #lastPacedAt = Number.NEGATIVE_INFINITY
  #timer: ReturnType<typeof setTimeout> | undefined
  /** When `#timer` fires. */
  #timerDue = 0

  constructor(
    private readonly concurrency: number,
    private readonly saturated: () => boolean = eventLoopSaturated(),
    private readonly busy = 1,
    private readonly quietMs = 50,
    private readonly overloadMs = 1_000,
    private readonly spacingMs = 5,
  ) {}

  /** A request's deliveries are being taken in (a queue server write can take a while under load). */
  ingestStarted(): void {
    this.#ingesting++
  }

  /**
   * That request is over: its deliveries `accepted` (held, or in the queue server), `refused`
   * (the backlog is at `maxPendingDeliveries`: answered 503), or `failed` (the write failed).
   */
  ingestEnded(outcome: 'accepted' | 'refused' | 'failed'): void {
    this.#ingesting--
    if (outcome === 'accepted') this.#lastIngestAt = Date.now()
    else if (outcome === 'refused') this.#lastRefusedAt = Date.now()
    this.#pump()
  }

  /** Resolves when an attempt may start; call `release()` once it has finished. */
  admit(): Promise<void> | undefined {
    if (this.#waiting.length === 0 && this.#mayStart()) {
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
    const now = Date.now()
    // Refused within `overloadMs`: the load is more than deliveries keep up with, not a burst.
    // Yielding then would only let each freed place take in another request, and deliveries
    // would crawl at one at a time for as long as the overload lasts: they go at full speed.
    if (now - this.#lastRefusedAt < this.overloadMs) return this.concurrency
    const ingesting = this.#ingesting > 0 || now - this.#lastIngestAt < this.quietMs
    return ingesting && this.saturated() ? this.busy : this.concurrency
  }

  /** Whether one more attempt may start now (and if it is held back to `busy`, marks when). */
  #mayStart(): boolean {
    const limit = this.#limit()
    if (this.#active >= limit) return false
    if (limit === this.concurrency) return true
    const now = Date.now()
    if (now - this.#lastPacedAt < this.spacingMs) return false
    this.#lastPacedAt = now
    return true
  }

  #pump(): void {
    while (this.#waiting.length > 0 && this.#mayStart()) {
      this.#active++
      this.#waiting.shift()!()
    }
    // Held back by ingest: look again when the spacing is over, if that is what holds the next
    // one back, else once ingest may have paused (an attempt that ends pumps again by itself).
    if (this.#waiting.length === 0 || this.#active >= this.concurrency) return
    const now = Date.now()
    const due = this.#active < this.#limit() ? this.#lastPacedAt + this.spacingMs : now + this.quietMs
    // (One timer: kept if it fires soon enough, else moved earlier.)
    if (this.#timer !== undefined) {
      if (this.#timerDue <= due) return
      clearTimeout(this.#timer)
    }
    this.#timerDue = due
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#pump()
    }, Math.max(1, due - now))
    ;(this.#timer as { unref?: () => void }).unref?.()
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
  const perf = (globalThis as { performance?: { eventLoopUtilization?: (a?: Utilization, b?: Utilization) => Utilization | undefined } }).performance
  const measure = perf?.eventLoopUtilization?.bind(perf)
  if (measure === undefined) return () => false
  let last = measure()
  let at = Date.now()
  let saturated = false
  return () => {
    const now = Date.now()
    if (now - at >= 100) {
      const current = measure()
      // A stand-in `performance` (a test's fake timers) may answer nothing: then not saturated.
      saturated = current !== undefined && last !== undefined && (measure(current, last)?.utilization ?? 0) >= 0.8
      last = current
      at = now
    }
    return saturated
  }
}
