/** Types of queue-servers.mjs (the tests are TypeScript; the benches and examples plain JS). */
export interface QueueServerProcess {
  url: string
  /**
   * `true`: the server's processes are stopped (SIGSTOP): connections are still accepted and
   * nothing is answered. `false`: they run again. `stop()` resumes a frozen server first.
   */
  freeze(on: boolean): void
  stop(): Promise<void>
}
export function freePort(): Promise<number>
/**
 * A fresh redis-server; `port` and `dir` let a caller restart one on the same port and data (a
 * `dir` given is kept at `stop()`). Append-only file on; `persistence: false`: no persistence; `args`: more redis-server flags.
 */
export function startRedis(options?: { port?: number; dir?: string; persistence?: boolean; args?: string[] }): Promise<QueueServerProcess & { port: number; dir: string }>
/**
 * A fresh PostgreSQL cluster (as root, run as the `postgres` user); `port` and `dir` let a caller
 * restart one on the same port and data (a `dir` given is kept at `stop()`).
 */
export function startPostgres(options?: { port?: number; dir?: string }): Promise<QueueServerProcess & { port: number; dir: string }>
