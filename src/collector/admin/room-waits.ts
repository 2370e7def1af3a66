/**
 * The waits for room of the sends under way. Once `stop()`ped (the collector closing), none
 * waits: in memory the rest is queued past the limit, so the drain attempts it and its report
 * counts it (held here, it would fail after the report); with a queue server the rest is given
 * up on (its request not answered 200).
 */
export class RoomWaits {
  stopped = false
  readonly #wakers = new Set<() => void>()
  readonly #sends = new Set<Promise<unknown>>()

  /** Resolves after `ms`, or at once on `stop()`. */
  wait(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve()
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.#wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.#wakers.add(wake)
    })
  }

  track(send: Promise<unknown>): void {
    this.#sends.add(send)
    const done = () => void this.#sends.delete(send)
    send.then(done, done)
  }

  /** Stops every wait; resolves once each send has queued or given up on what it held. */
  async stop(): Promise<void> {
    this.stopped = true
    for (const wake of [...this.#wakers]) wake()
    await Promise.allSettled([...this.#sends])
  }
}
