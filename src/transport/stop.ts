/**
 * One abort signal for every delivery of a client: `stop()` aborts the lot at once. It is the part
 * of `AbortSignal` that delivery's waits use (a connection slot, a retry delay, a request), with
 * its listeners in a `Set`: many batches wait on it at once, where an `AbortSignal` would remove
 * each listener by a linear search and warn past ten of them, and where one `AbortController` per
 * batch costs more than the rest of a request's bookkeeping on Node.
 */
export interface StopSignal {
  readonly aborted?: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}

/** The listeners are the set's members. */
export class Stop extends Set<() => void> implements StopSignal {
  /** As `AbortController#signal`: the signal is the object itself. */
  readonly signal: StopSignal = this
  declare aborted?: boolean
  declare reason?: unknown

  addEventListener(_type: 'abort', listener: () => void): void {
    this.add(listener)
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    this.delete(listener)
  }

  /** Calls every listener, once: waits check `aborted` before they add one. */
  abort(reason: unknown = Error('Delivery stopped.')): void {
    this.aborted = true
    this.reason = reason
    for (const listener of this) listener()
    this.clear()
  }
}
