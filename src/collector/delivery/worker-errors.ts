/** The durable collector's handler of its BullMQ worker's `error` events (the worker is made in `bullmq-connection.ts`). */
import type { Logger } from '../../logger.js'

/**
 * What is done with the worker's `error`s: each is reported, except a lock renewal that failed
 * because its job had just finished here. BullMQ renews the locks of the jobs a worker holds every
 * few seconds, and a renewal can cross a job's completion ("could not renew lock for job N",
 * though nothing is wrong: seen under load in the bench); a job still `processing` here has
 * really lost its lock, and that is reported.
 */
export function workerErrors(processing: ReadonlySet<string>, report: (error: Error) => void, log: Logger): (error: Error) => void {
  return (error) => {
    const renewal = /^could not renew lock for job (.+)$/.exec(error.message)
    if (renewal !== null && !processing.has(renewal[1])) log(`queue worker: ${error.message}, which had just finished here`)
    else report(error)
  }
}
