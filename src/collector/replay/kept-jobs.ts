/**
 * Payloads kept for replay in the finished jobs themselves (durable mode): a job holds
 * its payloads' exact bodies already, so instead of writing each body a second time, the worker
 * keeps its completed jobs for the `retention` (BullMQ's `removeOnComplete: { age }`, trimmed by
 * BullMQ as jobs complete) and each job's return value says how each of its payloads settled:
 *
 * - a `batch` job: one letter per payload, `d` delivered, `f` failed for good, `r` retried (its
 *   `deliver` job holds its outcome), `-` not attempted here (a duplicate);
 * - a `deliver` job: `d` or `f`.
 *
 * A replay reads the completed jobs that finished since its window's start (a payload finishes
 * after it is accepted), newest first: a payload replayed and settled again is found first in
 * the replay's job, and counts once, with its latest outcome.
 *
 * Trimmed jobs leave nothing behind, so what settled is counted too (`KeptCount`, by source and
 * minute of acceptance, written per batch of completed jobs): a window's `unavailable` is, per
 * minute it touches, what was counted less what is still kept. A replay that settles counts no
 * payload again; it moves its payload between delivered and failed when its outcome changed.
 */
import type { BatchData, DeliverData } from '../delivery/bullmq-job-data.js'
import { CoalescedWrites } from '../delivery/coalesced-writes.js'
import { KEPT_COUNTED_MS, type KeptPayload, type KeptWindow } from './kept.js'

type Job = import('bullmq').Job
type Queue = import('bullmq').Queue

export const MINUTE = 60_000

/**
 * How a payload settled, as a finished job's return value tells it: delivered, failed for good,
 * retried (its `deliver` job tells the rest), not attempted here.
 */
export type Letter = 'd' | 'f' | 'r' | '-'

/** Payloads settled per source and minute of acceptance (`minute`: ms since the epoch / 60,000). */
export interface KeptCount {
  source: string
  minute: number
  /** Payloads settled (a replay's: 0). */
  all: number
  /** Of those, failed for good (a replay's: +1 or -1 when its outcome changed). */
  failed: number
}

/** Where the counts live (state/redis-store.ts, state/postgres-store.ts). */
export interface KeptCounts {
  countKept(counts: readonly KeptCount[], retentionMs: number): Promise<void>
  /** Per minute from `fromMinute` to `toMinute` (inclusive) that has any. */
  keptCounts(source: string, fromMinute: number, toMinute: number): Promise<Map<number, { all: number; failed: number }>>
}

/** Completed jobs read at once. */
const PAGE = 500

/** A settled payload of a finished job: `wasFailed` for a replay (its kept outcome before). */
interface Settled {
  source: string
  at: number
  failed: boolean
  body: string
  wasFailed?: boolean
}

/** The settled payloads a completed job holds, from its data and its return value. */
function settledOf(job: Job, result: unknown): Settled[] {
  if (typeof result !== 'string') return []
  if (job.name === 'deliver') {
    const data = job.data as DeliverData
    if (result !== 'd' && result !== 'f') return []
    return [{ source: data.s, at: data.a ?? job.timestamp, failed: result === 'f', body: data.b, ...(data.w !== undefined && { wasFailed: data.w === 1 }) }]
  }
  const { s: source, d: items } = job.data as BatchData
  const settled: Settled[] = []
  items.forEach(([, body, , , acceptedAt, , wasFailed], i) => {
    const letter = result[i]
    if (letter !== 'd' && letter !== 'f') return
    settled.push({ source, at: acceptedAt ?? job.timestamp, failed: letter === 'f', body, ...(wasFailed !== undefined && { wasFailed: wasFailed === 1 }) })
  })
  return settled
}

/** What a completed job adds to the counts (see the module's comment). */
export function countsOf(job: Job, result: unknown): KeptCount[] {
  const counts = new Map<string, KeptCount>()
  for (const item of settledOf(job, result)) {
    const minute = Math.floor(item.at / MINUTE)
    const key = `${item.source}\n${minute}`
    let count = counts.get(key)
    if (count === undefined) counts.set(key, (count = { source: item.source, minute, all: 0, failed: 0 }))
    if (item.wasFailed === undefined) {
      count.all++
      if (item.failed) count.failed++
    } else count.failed += Number(item.failed) - Number(item.wasFailed)
  }
  return [...counts.values()].filter((c) => c.all !== 0 || c.failed !== 0)
}

/** Counts what completed jobs settled, those of many jobs in one write (not waited for: a failure goes to `report`). */
export class CompletedCounts {
  readonly #writes: CoalescedWrites<KeptCount>

  constructor(counts: () => Promise<KeptCounts>, retentionMs: number, private readonly report: (error: unknown) => void) {
    this.#writes = new CoalescedWrites(async (items) => (await counts()).countKept(items, retentionMs))
  }

  completed(job: Job, result: unknown): void {
    const counts = countsOf(job, result)
    if (counts.length > 0) this.#writes.write(counts).catch(this.report)
  }

  /** Resolves once what was counted so far is written (or failed). */
  async written(): Promise<void> {
    await this.#writes.write([]).catch(() => {})
  }
}

/**
 * The payloads of `source` accepted from `from` to `to` (inclusive) still kept in `queue`'s
 * completed jobs (those accepted `retentionMs` ago or less), and how many of the window's minutes'
 * payloads no longer are.
 */
export async function keptInJobs(
  queue: Queue,
  counts: KeptCounts,
  retentionMs: number,
  request: { source: string; from: number; to: number; failedOnly: boolean },
  now = Date.now(),
): Promise<KeptWindow> {
  const { source, from, to, failedOnly } = request
  const fromMinute = Math.floor(from / MINUTE)
  const toMinute = Math.floor(to / MINUTE)
  // The whole minutes the window touches, the last one too: the counts are by minute, and what
  // is kept in them outside [from, to] is kept, not unavailable.
  const start = fromMinute * MINUTE
  const end = Math.min(now, (toMinute + 1) * MINUTE - 1)
  const oldest = now - retentionMs
  // By body: the newest finished job's outcome is the payload's.
  const latest = new Map<string, Settled>()
  for (let page = 0; ; page++) {
    const jobs = await queue.getJobs(['completed'], page * PAGE, (page + 1) * PAGE - 1, false)
    for (const job of jobs) {
      for (const item of settledOf(job, job.returnvalue)) {
        if (item.source === source && item.at >= Math.max(start, oldest) && item.at <= end && !latest.has(item.body)) latest.set(item.body, item)
      }
    }
    // Newest first: a job finished before the window's first minute holds nothing of it, nor do the older ones.
    if (jobs.length < PAGE || (jobs.at(-1)!.finishedOn ?? 0) < start) break
  }
  const keptByMinute = new Map<number, number>()
  const kept: KeptPayload[] = []
  for (const item of latest.values()) {
    if (failedOnly && !item.failed) continue
    const minute = Math.floor(item.at / MINUTE)
    keptByMinute.set(minute, (keptByMinute.get(minute) ?? 0) + 1)
    if (item.at >= from && item.at <= to) kept.push({ source, at: item.at, failed: item.failed, body: item.body })
  }
  kept.sort((a, b) => a.at - b.at)
  let unavailable = 0
  // Counts exist for the retention and `KEPT_COUNTED_MS` past it only.
  const counted = await counts.keptCounts(source, Math.max(fromMinute, Math.floor((now - retentionMs - KEPT_COUNTED_MS) / MINUTE)), Math.min(toMinute, Math.floor(now / MINUTE)))
  for (const [minute, count] of counted) {
    unavailable += Math.max(0, (failedOnly ? count.failed : count.all) - (keptByMinute.get(minute) ?? 0))
  }
  return { kept, unavailable }
}
