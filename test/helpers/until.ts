/**
 * The one wait of the test suite: until `check` holds. Tests wait on signals (an event, a count,
 * an answer), never on a fixed sleep: this polls the signal, and fails after `timeoutMs` naming
 * `what` (with `progress()`, what it last saw, where given).
 *
 * An in-memory check is polled every turn of the event loop (`setImmediate`: as soon as anything
 * can have changed); one that asks a server (`intervalMs`, as the durable suites' checks of Redis
 * and PostgreSQL do) every `intervalMs`, so the polling does not become the server's load.
 */
export interface UntilOptions {
  /** Between two checks, ms (0: every turn of the event loop). */
  intervalMs?: number
  /** What the check sees, for the failure's message. */
  progress?: () => unknown
}

export async function until(check: () => boolean | Promise<boolean>, what = 'condition', timeoutMs = 5_000, { intervalMs = 0, progress }: UntilOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}${progress ? ` (got ${String(progress())})` : ''}`)
    await new Promise((resolve) => (intervalMs > 0 ? setTimeout(resolve, intervalMs) : setImmediate(resolve)))
  }
}
