/**
 * Durable mode: the `batch` jobs of requests written to the queue server together (see
 * `CoalescedWrites`), merged into fewer.
 */
import type { BATCH_JOB_OPTIONS, BatchData } from './bullmq-job-data.js'

export type BatchJob = { name: 'batch'; data: BatchData; opts: typeof BATCH_JOB_OPTIONS }

/** Deliveries in one `batch` job at most, once the requests of one write are merged. */
export const MERGED_JOB_DELIVERIES = 100

/**
 * The `batch` jobs of requests written together (under load), fewer: those of one source merge
 * into jobs of up to `MERGED_JOB_DELIVERIES` (a request's own is never split). Each job costs a
 * BullMQ script run at ingest, and a take, claim and finish at delivery. The cap keeps jobs many
 * enough for `deliveryConcurrency` attempts at once after a burst (a job makes its attempts one
 * after the other).
 */
export function mergeBatchJobs(jobs: readonly BatchJob[]): BatchJob[] {
  const merged: BatchJob[] = []
  const open = new Map<string, BatchJob>()
  for (const job of jobs) {
    const into = open.get(job.data.s)
    if (into !== undefined && into.data.d.length + job.data.d.length <= MERGED_JOB_DELIVERIES) {
      for (const delivery of job.data.d) into.data.d.push(delivery)
      continue
    }
    const fresh: BatchJob = { ...job, data: { s: job.data.s, d: [...job.data.d] } }
    merged.push(fresh)
    open.set(job.data.s, fresh)
  }
  return merged
}
