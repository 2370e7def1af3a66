/**
 * A wait that a stop cuts short: the durable runner's attempts, given up on at the drain's bound.
 */
import type { Stop } from '../../transport/stop.js'

/** An attempt given up on (the process is closing): its job goes back to the server as it was. */
export const STOPPED: unique symbol = Symbol('stopped')

/**
 * `attempt`'s outcome, or `STOPPED` once `stop` aborts. Its listener goes when the attempt
 * settles: a race against one long-lived promise would leave a reaction (and the attempt's
 * outcome) on it per attempt, growing for as long as the process runs.
 */
export function orStopped<T>(attempt: Promise<T>, stop: Stop): Promise<T | typeof STOPPED> {
  if (stop.aborted) return Promise.resolve(STOPPED)
  return new Promise((resolve, reject) => {
    const stopped = () => resolve(STOPPED)
    stop.addEventListener('abort', stopped)
    attempt.then(
      (outcome) => {
        stop.removeEventListener('abort', stopped)
        resolve(outcome)
      },
      (error: unknown) => {
        stop.removeEventListener('abort', stopped)
        reject(error)
      },
    )
  })
}
