/**
 * Durable mode: how many attempts a process makes at once. Up to `concurrency`; but while this
 * process is accepting requests (an enqueue within the last `quietMs`), only `busy` of them, so
 * answering senders comes first. Deliveries are safe in the queue server meanwhile, and the
 * work is the same: when the CPU is the limit, the last delivery lands no later, while ingest
 * is answered sooner. A backlog that grows under steady load meets `maxPendingDeliveries`
 * (ingest answered 503), and attempts go back to full concurrency as soon as ingest pauses.
 */
export class Pacer {
  #active = 0
  #waiting: Array<() => void> = []
  #lastIngestAt = Number.NEGATIVE_INFINITY
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly concurrency: number,
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
    return Date.now() - this.#lastIngestAt < this.quietMs ? this.busy : this.concurrency
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
