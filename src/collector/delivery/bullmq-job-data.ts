/**
 * The collector's two kinds of BullMQ job as the queue server holds them (see `bullmq-queue.ts`):
 * the data of a `batch` job and of a `deliver` job, the options every job is added with, and
 * `addJobs`, which writes new jobs to the server. Apart from what a worker does with the jobs
 * (`bullmq-jobs.ts`) because ingest writes them too (`bullmq-queue.ts`, `batch-merge.ts`).
 */
type Queue = import('bullmq').Queue

export interface BatchData {
  s: string
  /**
   * Each delivery: its type, exact body, its messageId (messages only), its traceId (when
   * traced), and for a replay when it was first accepted, the URLs it goes to (all: null) and
   * whether its kept outcome was failed (1) or delivered (0).
   */
  d: Array<[type: string, body: string, messageId: string | null, traceId?: string | null, acceptedAt?: number, urls?: number[] | null, wasFailed?: 0 | 1]>
}

export interface DeliverData {
  s: string
  t: string
  b: string
  /** Attempts made so far. */
  n: number
  /** When the first attempt started (ms since epoch), once one has failed. */
  f?: number
  /** URLs (indexes) the next attempt goes to, after a partial failure. */
  u?: number[]
  /** The delivery's traceId, when its progress is reported (`TraceSink`). */
  r?: string
  /** When its retry is due (ms since epoch): scheduled to start inside the retry window. */
  d?: number
  /** When the payload was accepted (ms since epoch): kept for replay with it. */
  a?: number
  /** A replay: whether its kept outcome was failed (1) or delivered (0). */
  w?: 0 | 1
}

/** A `deliver` job to add (the retry of a `batch` job's payload). */
export type DeliverJob = { name: 'deliver'; data: DeliverData; opts: object }

/**
 * Options of every job the collector adds. Whether a completed job is removed at once or kept
 * (for replay, on Redis) is the worker's choice (`removeOnComplete` in `bullmq-connection.ts`).
 */
export const JOB_OPTIONS = { removeOnFail: 1000 } as const

/** What a `batch` job is added with: a processor error (queue server trouble) re-runs it later. */
export const BATCH_JOB_OPTIONS = { ...JOB_OPTIONS, attempts: 1000, backoff: { type: 'fixed', delay: 1000 } } as const

/** A job to add: its name, data and options (as `Queue.add` takes them). */
export type NewJob = { name: string; data: unknown; opts: object }

/**
 * Adds `jobs` to the queue server the way that costs it least. One job: `add`. Several: on Redis
 * `addBulk` (one MULTI); on PostgreSQL one `add` each, side by side (BullMQ's pool). There BullMQ's
 * `addBulk` creates two temporary tables per call, about ten times the server's work of an `add`
 * (pg_stat_statements during the durable bench);
 * the price is that a failure can leave some of the jobs added, which is what a sender's retry and
 * de-duplication by messageId are for.
 */
export async function addJobs(queue: Queue, jobs: readonly NewJob[], server: 'redis' | 'postgres'): Promise<void> {
  if (jobs.length === 1) await queue.add(jobs[0].name, jobs[0].data, jobs[0].opts)
  else if (server === 'redis') await queue.addBulk(jobs as NewJob[])
  else await Promise.all(jobs.map((job) => queue.add(job.name, job.data, job.opts)))
}
