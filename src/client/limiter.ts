import type { StopSignal } from '../transport/stop.js'

/**
 * A counting semaphore: at most `limit` holders at once, waiters served in order. A waiter is
 * its promise's two functions only: one listener on `signal` (added at the first wait) rejects
 * every waiter with the signal's reason, so no waiter keeps closures of its own.
 */
export class Limiter {
  #active = 0
  #listening = false
  readonly #waiting: Array<[resolve: () => void, reject: (reason: unknown) => void]> = []

  constructor(readonly limit: number, readonly signal?: StopSignal) {}

  /** Takes a slot if one is free, at once. */
  take(): boolean {
    return this.#active < this.limit && !this.signal?.aborted && ++this.#active > 0
  }

  /** Resolves when a slot is held; rejects with the signal's reason if aborted before. */
  acquire(): Promise<void> {
    const signal = this.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (this.take()) return Promise.resolve()
    if (signal && !this.#listening) {
      this.#listening = true
      signal.addEventListener('abort', () => {
        for (const [, reject] of this.#waiting.splice(0)) reject(signal.reason)
      })
    }
    return new Promise((resolve, reject) => this.#waiting.push([resolve, reject]))
  }

  release(): void {
    const next = this.#waiting.shift()
    if (next) next[0]()
    else this.#active--
  }
}
