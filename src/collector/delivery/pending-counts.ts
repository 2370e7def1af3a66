/**
 * The shared counters as a durable queue keeps them: this process's increments written, and
 * everyone's read, every 250 ms (`refreshCounts`).
 *
 * The shared `pending` and `retrying` counts back the backlog limit, and they are written every
 * 250 ms: a process killed in between leaves them off by what it had not written, for good. With
 * no unsettled job in the server they must be 0, so `reconcilePending` then sets them to 0 (the
 * durable queue calls it at start and every 30 s). The jobs are counted before and after the
 * counts are read: a job added in between leaves them as they are.
 */
import type { Queue } from 'bullmq'
import type { SharedState } from '../state/shared-state.js'

/** Job states that hold deliveries not yet settled. */
const UNSETTLED = ['wait', 'waiting', 'delayed', 'active', 'prioritized', 'waiting-children'] as const

const hasUnsettled = async (queue: Queue) => Object.values(await queue.getJobCounts(...UNSETTLED)).some((n) => n > 0)

export async function reconcilePending(queue: Queue, counters: SharedState): Promise<void> {
  if (await hasUnsettled(queue)) return
  await counters.flush()
  const values = await counters.read()
  if (await hasUnsettled(queue)) return
  for (const [key, value] of Object.entries(values)) {
    if (value !== 0 && (key.endsWith('|pending') || key.endsWith('|retrying'))) counters.add(key, -value)
  }
  await counters.flush()
}

/**
 * Every 250 ms: this process's increments written, then everyone's counts read and handed to
 * `snapshot`; every 30 s, `reconcilePending` first. The interval never keeps the process alive.
 */
export function refreshCounts(queue: Queue, counters: SharedState, snapshot: (values: Record<string, number>) => void, failed: (error: unknown) => void): ReturnType<typeof setInterval> {
  let ticks = 0
  const refresh = setInterval(() => {
    const reconciled = ++ticks % 120 === 0 ? reconcilePending(queue, counters) : Promise.resolve()
    reconciled.then(() => counters.flush()).then(() => counters.read()).then(snapshot, failed)
  }, 250)
  ;(refresh as { unref?: () => void }).unref?.()
  return refresh
}
