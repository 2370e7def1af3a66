import type { StopSignal } from '../transport/stop.js'

/**
 * A counting semaphore: at most `limit` holders at once, waiters served in order. A waiter is
 * its promise's two functions only: one listener on `signal` rejects every waiter with the
 * signal's reason, so no waiter keeps closures or a listener of its own.
 */
export class Limiter {
  #active = 0
  readonly #waiting: Array<[resolve: (unslotted?: true) => void, reject: (reason: unknown) => void]> = []

  readonly #limit: number
  readonly #signal?: StopSignal

  constructor(limit: number, signal?: StopSignal) {
    this.#limit = limit
    this.#signal = signal
    signal?.addEventListener('abort', () => {
      for (const waiter of this.#waiting.splice(0)) waiter[1](signal.reason)
    })
  }

  /**
   * Resolves when a slot is held, or with `true` when `wake()` lets it go without one; rejects
   * with the signal's reason if aborted before.
   */
  acquire(): Promise<true | void> {
    if (this.#signal?.aborted) return Promise.reject(this.#signal.reason)
    if (this.#active < this.#limit) {
      this.#active++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => this.#waiting.push([resolve, reject]))
  }

  /** Hands the slot to the first waiter, if any. */
  release(): void {
    const next = this.#waiting.shift()
    if (next) next[0]()
    else this.#active--
  }

  /** Every waiter goes at once, without a slot (its `acquire` resolves with `true`). */
  wake(): void {
    for (const waiter of this.#waiting.splice(0)) waiter[0](true)
  }
}
