/**
 * What a BullMQ worker does with the collector's two kinds of job (see `bullmq-queue.ts`):
 *
 * - `batch` (one per accepted request): claims its messages' ids for de-duplication, then makes
 *   the FIRST attempt of each payload itself, one after the other (a worker runs
 *   `deliveryConcurrency` jobs at once, so that many attempts are in flight per process). Only a
 *   payload whose first attempt failed and is worth retrying becomes a `deliver` job, delayed by
 *   the retry policy. Every `PROGRESS_EVERY` settled payloads, the job records which (its
 *   progress, after adding the retries scheduled so far); a re-run after its process died skips
 *   those. So the payloads a kill can deliver twice are, per job active at the kill, those
 *   settled since its last record and the one attempt in flight (a receiver may have taken it):
 *   at most `PROGRESS_EVERY` per job, so with `deliveryConcurrency` C at most C × PROGRESS_EVERY
 *   (a `deliver` job: its one attempt).
 * - `deliver` (a retry): ONE attempt; another retry is the same job moved to the delayed set, its
 *   data carrying the attempt count, the first attempt's time (the 4-hour window survives
 *   restarts) and the URLs still worth trying.
 *
 * Closing (SIGTERM): no new attempt starts; a job hands back what it has not attempted (its
 * progress recorded, moved to the delayed set for any process). At the drain's bound, attempts
 * still in flight are given up on the same way, so the next process need not wait for locks to
 * expire (such an attempt may still have reached the receiver: the duplicate bound above).
 *
 * A delivery with a `traceId` reports each attempt, retry and its outcome to the `TraceSink`,
 * whichever process makes them.
 */
import type { Logger } from '../../logger.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import { DEDUP_TTL_MS } from '../ingest/dedup.js'
import type { SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'
import type { Pacer } from './pacer.js'
import type { TraceSink } from './queue.js'

type Job = import('bullmq').Job
type Queue = import('bullmq').Queue
type Bullmq = typeof import('bullmq')

/** Settled payloads a `batch` job delivers before it records its progress in the server. */
export const PROGRESS_EVERY = 10

export interface BatchData {
  s: string
  /** Each delivery: its type, exact body, its messageId (messages only) and its traceId (when traced). */
  d: Array<[type: string, body: string, messageId: string | null, traceId?: string | null]>
}

/** A `batch` job's progress: the indexes (in `d`) settled, or handed to a `deliver` job. */
interface BatchProgress {
  done: number[]
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
}

/** Options of every job the collector adds. */
export const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: 1000 } as const

/** What a `batch` job is added with: a processor error (queue server trouble) re-runs it later. */
export const BATCH_JOB_OPTIONS = { ...JOB_OPTIONS, attempts: 1000, backoff: { type: 'fixed', delay: 1000 } } as const

type Outcome = { retry: DeliverData; delay: number } | undefined

/** An attempt given up on (the process is closing): its job goes back to the server as it was. */
const STOPPED: unique symbol = Symbol('stopped')

export class JobRunner {
  constructor(
    private readonly deps: {
      bullmq: Bullmq
      queue: Queue
      destinations: ReadonlyMap<string, WebhookDestination>
      counters: SharedState
      tally: DeliveryTally
      log: Logger
      traces: TraceSink | undefined
      /** Admits each attempt (ingest first). */
      pacer: Pacer
      /** Whether the process is closing: a `batch` job then hands back what it has not attempted. */
      closing: () => boolean
      /** Resolves at the drain's bound: attempts still in flight are given up on, their jobs handed back. */
      stopped: Promise<void>
    },
  ) {}

  process(job: Job, token: string | undefined): Promise<void> {
    return job.name === 'batch' ? this.#batch(job, token) : this.#deliver(job, token)
  }

  /** Later: a source this process does not know (configurations differ), or the process is closing. */
  async #handBack(job: Job, token: string | undefined, delayMs: number): Promise<never> {
    await job.moveToDelayed(Date.now() + delayMs, token)
    throw new this.deps.bullmq.DelayedError()
  }

  async #batch(job: Job, token: string | undefined): Promise<void> {
    const { s: source, d: items } = job.data as BatchData
    const destination = this.deps.destinations.get(source)
    if (destination === undefined) return this.#handBack(job, token, 5_000)
    const done = new Set((job.progress as BatchProgress | undefined)?.done ?? [])
    if (job.attemptsStarted > 1 || job.stalledCounter > 0) {
      // A re-run: a retry added just before its process died (progress not recorded yet) exists.
      const { queue } = this.deps
      const added = await Promise.all(items.map((_, i) => (done.has(i) ? undefined : queue.getJob(`${job.id}-${i}`))))
      added.forEach((retry, i) => retry && done.add(i))
    }
    const todo = items.flatMap((_, i) => (done.has(i) ? [] : [i]))
    // De-duplication: this job claims its ids (a re-run finds them still its own).
    const ids = todo.flatMap((i) => (items[i][2] === null ? [] : [items[i][2]]))
    const held = await this.deps.counters.claim(source, ids, String(job.id), DEDUP_TTL_MS)
    // A messageId twice in one request: its first occurrence is the one delivered.
    const firstIndex = new Map<string, number>()
    items.forEach(([, , id], i) => id !== null && !firstIndex.has(id) && firstIndex.set(id, i))
    let duplicates = 0
    const attempt: number[] = []
    for (const i of todo) {
      const id = items[i][2]
      if (id === null || (held.has(id) && firstIndex.get(id) === i)) attempt.push(i)
      else {
        duplicates++
        done.add(i)
      }
    }
    if (duplicates > 0) {
      this.deps.tally.deduplicated(source, duplicates)
      this.deps.counters.add(`${source}|pending`, -duplicates)
    }
    const retries: Array<{ name: 'deliver'; data: DeliverData; opts: object }> = []
    const record = async () => {
      if (retries.length > 0) await this.deps.queue.addBulk(retries.splice(0))
      await job.updateProgress({ done: [...done] } satisfies BatchProgress)
    }
    let unrecorded = 0
    for (const i of attempt) {
      if (this.deps.closing()) {
        await record()
        return this.#handBack(job, token, 0)
      }
      const [type, body, , traceId] = items[i]
      const outcome = await this.#attempt(destination, { s: source, t: type, b: body, n: 0, ...(traceId != null && { r: traceId }) })
      if (outcome === STOPPED) {
        await record()
        return this.#handBack(job, token, 0)
      }
      if (outcome) {
        // The id is derived from the batch's: re-added after a re-run, it is the same job.
        retries.push({ name: 'deliver', data: outcome.retry, opts: { ...JOB_OPTIONS, jobId: `${job.id}-${i}`, delay: outcome.delay } })
      }
      done.add(i)
      if (++unrecorded >= PROGRESS_EVERY && done.size < items.length) {
        await record()
        unrecorded = 0
      }
    }
    // Completing the job (removed) records the rest.
    if (retries.length > 0) await this.deps.queue.addBulk(retries)
  }

  async #deliver(job: Job, token: string | undefined): Promise<void> {
    const data = job.data as DeliverData
    const destination = this.deps.destinations.get(data.s)
    if (destination === undefined) return this.#handBack(job, token, 5_000)
    const outcome = await this.#attempt(destination, data)
    if (outcome === STOPPED) return this.#handBack(job, token, 0)
    if (outcome === undefined) return
    await job.updateData(outcome.retry)
    await job.moveToDelayed(Date.now() + outcome.delay, token)
    throw new this.deps.bullmq.DelayedError()
  }

  /**
   * One attempt of a delivery whose previous attempts are described by `data`: settled (counted,
   * traced) or, when another attempt is worth it, that attempt's data and delay.
   */
  async #attempt(destination: WebhookDestination, data: DeliverData): Promise<Outcome | typeof STOPPED> {
    const { counters, tally, log, pacer, stopped } = this.deps
    await pacer.admit()
    if (this.deps.closing()) {
      pacer.release()
      return STOPPED
    }
    const attempt = data.n + 1
    const trace = data.r === undefined ? undefined : this.deps.traces?.(data.r)
    if (trace) {
      const all = destination.urls
      trace.attempt(attempt, data.u ? data.u.map((i) => all[i]).filter((url) => url !== undefined) : all)
    }
    const startedAt = Date.now()
    const attempted = destination.attempt(data.b, { attempt, ...(data.u && { urls: data.u }) }).finally(() => pacer.release())
    const outcome = await Promise.race([attempted, stopped.then((): typeof STOPPED => STOPPED)])
    if (outcome === STOPPED) return STOPPED
    const wasRetrying = data.f !== undefined
    const delay = outcome.deliveredBy >= 0 ? undefined : destination.nextRetryDelay(outcome, attempt, data.f ?? startedAt)
    if (delay === undefined) {
      const delivered = outcome.deliveredBy >= 0
      if (!delivered) log(`${data.s}: ${data.t} failed after ${attempt} attempt(s): ${outcome.error?.message ?? 'unknown'}`)
      trace?.settled(delivered, outcome.results)
      if (delivered) tally.forwarded(data.s)
      else tally.failed(data.s)
      counters.add(`${data.s}|pending`, -1)
      if (wasRetrying) counters.add(`${data.s}|retrying`, -1)
      return undefined
    }
    tally.retried(data.s)
    if (!wasRetrying) counters.add(`${data.s}|retrying`, 1)
    log(`${data.s}: attempt ${attempt} failed (${outcome.error?.message ?? 'unknown'}); retry in ${delay} ms`)
    trace?.retry(attempt, outcome.results, delay)
    return { retry: { ...data, n: attempt, f: data.f ?? startedAt, u: outcome.retry }, delay }
  }
}
