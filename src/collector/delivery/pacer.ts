/**
 * Durable mode: how many attempts a process makes at once. Up to `concurrency`; but while this
 * process is accepting requests (an enqueue within the last `quietMs`) AND its event loop is
 * saturated (the CPU is the limit, not the receivers), only `busy` of them, so answering senders
 * comes first. Deliveries are safe in the queue server meanwhile, and the work is the same: the
 * last delivery lands no later, while ingest is answered sooner. A backlog that grows under
 * steady load meets `maxPendingDeliveries` (ingest answered 503), and attempts go back to full
 * concurrency as soon as ingest pauses. With slow receivers the loop is not saturated: nothing
 * is held back.
 */
export class Pacer {
  #active = 0
  #waiting: Array<() => void> = []
  #lastIngestAt = Number.NEGATIVE_INFINITY
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly concurrency: number,
    private readonly saturated: () => boolean = eventLoopSaturated(),
    private readonly busy = Math.max(1, Math.floor(concurrency / 8)),
    private readonly quietMs = 50,
  ) {}

  /** This process accepted a request. */
  ingested(): void {
    this.#lastIngestAt = Date.now()
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

  #limit(): number {
    return Date.now() - this.#lastIngestAt < this.quietMs && this.saturated() ? this.busy : this.concurrency
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
