/**
 * A `deliver()` promise that keeps the process alive while somebody waits for it. Pending retries
 * sleep on background timers, so a delivery nobody awaits never keeps a process alive (the
 * contract); but a script that does `await destination.deliver(…)` has nothing else holding its
 * process during a retry's wait, and Node would end it there (top-level await: exit code 13) and
 * lose the message. The client solves the same conflict by holding the process during `flush()`
 * and `close()`; here the wait is the caller's `await` (or `.then`, `.catch`, `.finally`,
 * `Promise.all`), each of which calls `then`, so the hold starts at the first `then` and ends
 * when the delivery settles.
 */
import { holdProcess } from '#platform'

class HeldWhileAwaited<T> extends Promise<T> {
  // Promises derived from this one (`then`'s result) are plain: only this one holds.
  static get [Symbol.species](): PromiseConstructor {
    return Promise
  }

  #held = false

  override then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    if (!this.#held) {
      this.#held = true
      const release = holdProcess()
      super.then(release, release)
    }
    return super.then(onFulfilled, onRejected)
  }
}

/** `promise`, as a promise that holds the process from its first `then` until it settles. */
export function heldWhileAwaited<T>(promise: Promise<T>): Promise<T> {
  return new HeldWhileAwaited<T>((resolve) => resolve(promise))
}
