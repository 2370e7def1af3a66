import type { StopSignal } from '../transport/stop.js'

/** A counting semaphore: at most `limit` holders at once, waiters served in order. */
export class Limiter {
  #active = 0
  readonly #waiting: Array<() => void> = []

  constructor(readonly limit: number) {}

  /** Resolves when a slot is held; rejects with the signal's reason if aborted while waiting. */
  acquire(signal?: StopSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (this.#active < this.limit) {
      this.#active++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort)
        this.#active++
        resolve()
      }
      const onAbort = () => {
        const index = this.#waiting.indexOf(grant)
        if (index >= 0) this.#waiting.splice(index, 1)
        reject(signal!.reason)
      }
      this.#waiting.push(grant)
      signal?.addEventListener('abort', onAbort) // An abort fires once: no `once` needed.
    })
  }

  release(): void {
    this.#active--
    const next = this.#waiting.shift()
    if (next) next()
  }
}
