/**
 * BullMQ's `Worker` as the collector runs it: nothing of it outlives its `close`. BullMQ's own
 * leaves timers behind when the queue server is gone, each holding a library user's process
 * open after the collector's `close` resolved:
 *
 * - after a connection error it waits before trying again, on timers `close` does not end: 5 s
 *   before the next stalled-jobs check, 15 s before the next fetch (PostgreSQL fails at once
 *   where ioredis would queue the command); here `close` ends those waits;
 * - it renews its jobs' locks until its `close` finishes, which on Redis it may never do: `close`
 *   waits for the end of its blocking connection, and ioredis reports none for a connection
 *   disconnected while it waited to reconnect. `abandon` is for a `close` that did not finish in
 *   time (`close(true)` then only returns the same promise).
 *
 * Built on the BullMQ module loaded at run time (an optional peer dependency), hence a factory.
 */
export type CollectorWorker = import('bullmq').Worker & { abandon(): void }

/** BullMQ's `Worker` constructor: name, processor, options (with the connection), backend factory. */
type CollectorWorkerClass = new (name: string, processor: import('bullmq').Processor, options: never, backend?: never) => CollectorWorker

/** What BullMQ's waits are ended with (its own `AbortController` type, a polyfill's). */
type DelayAbort = Parameters<import('bullmq').Worker['delay']>[1]

/** The wait after a failure BullMQ would try again at once (`retryIfFailed`). */
const AFTER_FAILURE_MS = 1_000

export function collectorWorkerClass(bullmq: typeof import('bullmq')): CollectorWorkerClass {
  const Worker = class extends bullmq.Worker {
    /** Aborted by `close`: every wait below ends then. */
    readonly #closed = new AbortController()

    override close(force?: boolean): Promise<void> {
      this.#closed.abort()
      return super.close(force)
    }

    override async delay(ms?: number, abortController?: DelayAbort): Promise<void> {
      if (this.#closed.signal.aborted) return
      const either = new AbortController()
      const abort = () => either.abort()
      this.#closed.signal.addEventListener('abort', abort)
      abortController?.signal.addEventListener('abort', abort)
      try {
        await super.delay(ms, either as unknown as DelayAbort)
      } finally {
        this.#closed.signal.removeEventListener('abort', abort)
        abortController?.signal.removeEventListener('abort', abort)
      }
    }

    /** BullMQ's, without its own wait after a failure (a bare timer): `delay`'s instead. */
    protected override async checkConnectionError<T>(fn: () => Promise<T>, delayInMs = 5_000): Promise<T | undefined> {
      let failed = false
      const result = await super.checkConnectionError(() => fn().catch((error: unknown) => {
        failed = true
        throw error
      }), 0)
      if (failed) await this.delay(delayInMs)
      return result
    }

    /** Stops lock renewal (the jobs' locks expire and other processes take them) and drops the connections. */
    abandon(): void {
      void this.lockManager.close()
      void this.disconnect().catch(() => {})
      // ioredis neither ends a connection disconnected while it waited to reconnect nor fails its
      // commands (redis/ioredis#1247): BullMQ's blocking wait then keeps its watchdog timer, up to
      // 11 s. One more connection attempt makes the client see it was closed: it ends, and fails them.
      void this.getBackend().blockingClient?.then((client) => {
        if (client.status === 'reconnecting') client.connect().catch(() => {})
      }, () => {})
    }
  }
  waitAfterFailures(Worker.prototype)
  return Worker
}

type RetryIfFailed = (fn: () => Promise<unknown>, opts: unknown) => Promise<unknown>

/**
 * BullMQ's `retryIfFailed` (private), with a wait after a failure it only reports. Its fetch loop
 * asks for the next job again at once after an error it does not take for a lost connection;
 * PostgreSQL's refusal of a database or role that does not exist, or of a password (3D000, 28000,
 * 28P01), is such an error, and comes back at once: the loop took the whole event loop (senders
 * went unanswered, SIGTERM did nothing) and logged millions of them. Now a second apart at most.
 */
function waitAfterFailures(prototype: import('bullmq').Worker): void {
  const worker = prototype as unknown as { retryIfFailed: RetryIfFailed }
  const retryIfFailed = worker.retryIfFailed
  worker.retryIfFailed = async function (this: Pick<import('bullmq').Worker, 'closing' | 'delay'>, fn, opts) {
    let failed = false
    const result = await retryIfFailed.call(this, () => {
      failed = false
      return fn().catch((error: unknown) => {
        failed = true
        throw error
      })
    }, opts)
    // Its last try failed and it returned all the same (`onlyEmitError`): it would call again now.
    if (failed && !this.closing) await this.delay(AFTER_FAILURE_MS)
    return result
  }
}
