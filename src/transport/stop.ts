/**
 * One abort signal for every delivery of a client: `stop()` aborts the lot at once. It is the part
 * of `AbortSignal` that delivery's waits use (a connection slot, a retry delay, a request), with
 * its listeners in an array: many batches wait on it at once, where an `AbortSignal` would warn
 * past ten of them, and one `AbortController` per batch costs more than the rest of a request's
 * bookkeeping on Node.
 *
 * Not a `Set` either. Every request adds a listener and removes it when it ends, and on V8 a `Set`
 * that many entries pass through keeps the removed ones (and all that their closures hold: the
 * request, its answer) alive through young-generation collections until the next full one
 * (`node --trace-gc-nvp` shows the copying). An array that removes an entry by `splice` keeps
 * nothing.
 */
export interface StopSignal {
  readonly aborted?: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

export class Stop implements StopSignal {
  /** As `AbortController#signal`: the signal is the object itself. */
  readonly signal: StopSignal = this
  aborted?: boolean
  reason?: unknown
  #listeners: Array<() => void> = []

  /** Listeners waiting (a long-running process's count must not grow: see or-stopped.test.ts). */
  get size(): number {
    return this.#listeners.length
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    this.#listeners.push(listener)
  }

  /**
   * A linear search, over what waits on the signal: the requests in flight (at most
   * `maxConcurrentRequests`), the limiter, and in an outage the batches waiting to retry.
   */
  removeEventListener(_type: 'abort', listener: () => void): void {
    const at = this.#listeners.lastIndexOf(listener)
    if (at >= 0) this.#listeners.splice(at, 1)
  }

  /** Calls every listener once, in the order they were added: waits check `aborted` before they add one. */
  abort(reason: unknown = Error('Delivery stopped.')): void {
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = []
    for (const listener of listeners) listener()
  }
}
