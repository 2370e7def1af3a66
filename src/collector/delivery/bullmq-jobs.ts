/**
 * What a BullMQ worker does with the collector's two kinds of job (see `bullmq-queue.ts`):
 *
 * - `batch` (one per accepted request): claims its messages' ids for de-duplication, then makes
 *   the FIRST attempt of each payload itself, one after the other (a worker runs
 *   `deliveryConcurrency` jobs at once, so that many attempts are in flight per process). Only a
 *   payload whose first attempt failed and is worth retrying becomes a `deliver` job, delayed by
 *   the retry policy. Once a payload's attempt has an outcome, the job marks it settled in the
 *   queue server (after adding its `deliver` job, if any) before its next attempt: the marks of
 *   every job of the process go together (one write, `CoalescedWrites`). A re-run after its
 *   process died skips what is marked, so the one payload it sends again is the one whose attempt
 *   was in flight (started, its outcome not recorded yet; a receiver may have taken it). The
 *   marks are dropped once the job completed (`completed`), or expire after `SETTLED_TTL_MS`.
 * - `deliver` (a retry): ONE attempt; another retry is the same job moved to the delayed set, its
 *   data carrying the attempt count, the first attempt's time (the 4-hour window survives
 *   restarts) and the URLs still worth trying. Its completion is its record: killed before it, the
 *   attempt in flight is made again.
 *
 * Payloads kept for replay are kept in the completed jobs (../replay/kept-jobs.ts): a job then
 * returns how each of its payloads settled (the letters go in the settled marks too, for a
 * re-run), and what completed is counted.
 *
 * So after a kill, the payloads that can reach a receiver twice are those whose attempt was in
 * flight: at most one per job active at the kill, `deliveryConcurrency` in all.
 *
 * Closing (SIGTERM): no new attempt starts; a job hands back what it has not attempted (moved to
 * the delayed set for any process; what it attempted is marked already). At the drain's bound,
 * attempts still in flight are given up on the same way, so the next process need not wait for
 * locks to expire (such an attempt may still have reached the receiver: in flight, as above).
 *
 * A delivery with a `traceId` reports each attempt, retry and its outcome to the `TraceSink`,
 * whichever process makes them, and the outcome of each URL that answers after another one
 * delivered it (after the job has completed; a closing process waits for those, `LateOutcomes`).
 *
 * The jobs' data and options, and adding them to the server, are `bullmq-job-data.ts`; which
 * payloads of a `batch` job are duplicates (its claims) is `batch-claims.ts`.
 */
import { count, type Logger } from '../../logger.js'
import type { Stop } from '../../transport/stop.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import type { Mark, SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'
import { claimIds } from './batch-claims.js'
import { JOB_OPTIONS, type BatchData, type DeliverData, type DeliverJob, type NewJob } from './bullmq-job-data.js'
import { CoalescedWrites } from './coalesced-writes.js'
import { LateOutcomes } from './late-outcomes.js'
import { orStopped, STOPPED } from './or-stopped.js'
import { CompletedCounts, type Letter } from '../replay/kept-jobs.js'
import type { Pacer } from './pacer.js'
import type { TraceSink } from './queue.js'

type Job = import('bullmq').Job
type Queue = import('bullmq').Queue
type Bullmq = typeof import('bullmq')

export { addJobs, BATCH_JOB_OPTIONS, JOB_OPTIONS, type BatchData, type DeliverData, type NewJob } from './bullmq-job-data.js'

/**
 * How long a `batch` job's settled marks are kept when its process died before dropping them: a
 * job resumed within a week (every collector stopped meanwhile) still skips what it settled.
 */
export const SETTLED_TTL_MS = 7 * 24 * 3600_000

/**
 * How late a retry may be taken from the queue server after it came due and still be attempted,
 * though its window ended meanwhile: a running collector takes a due job within milliseconds
 * (more under load). One taken later came due while no collector ran (or all were busy).
 */
const PICKUP_GRACE_MS = 1_000

/** An attempt's outcome: settled (delivered or failed for good), or another attempt to make. */
type Outcome = { delivered: boolean } | { retry: DeliverData; delay: number }

/** A payload of a `batch` job settled: its mark, and the `deliver` job that retries it, if any. */
interface Settled {
  mark: Mark
  retry?: DeliverJob
}

/** The key a `batch` job's marks and claims are stored under: its id, and when it was added (ids can be reused after a queue is emptied). */
const jobKey = (job: Job) => `${job.id}@${job.timestamp}`

export class JobRunner {
  /** Settled payloads of every `batch` job running here, written together: their retries, then their marks. */
  readonly #settled: CoalescedWrites<Settled>
  /** Marks of completed jobs, dropped together. */
  readonly #forgotten: CoalescedWrites<readonly [job: string, count: number]>
  /** Payloads of completed jobs counted for replay (when kept in the jobs). */
  readonly #counted: CompletedCounts | undefined
  /** Attempts started and not settled: those a stop at the drain's bound gives up on. */
  #inFlight = 0
  /** Traced URLs still answering after their attempt was delivered by another URL. */
  readonly #late = new LateOutcomes()

  constructor(
    private readonly deps: {
      bullmq: Bullmq
      queue: Queue
      /** Adds jobs to `queue` (see `addJobs`). */
      add: (jobs: readonly NewJob[]) => Promise<void>
      destinations: ReadonlyMap<string, WebhookDestination>
      counters: SharedState
      /**
       * How long settled payloads are kept for replay (ms; none: not kept), in the completed jobs,
       * which then return how each payload settled.
       */
      retention?: number
      tally: DeliveryTally
      log: Logger
      /** A background failure of the queue server (dropping completed jobs' marks). */
      report: (where: string, error: Error) => void
      traces: TraceSink | undefined
      /** Admits each attempt (ingest first). */
      pacer: Pacer
      /** Whether the process is closing: a `batch` job then hands back what it has not attempted. */
      closing: () => boolean
      /**
       * Aborted at the drain's bound: attempts still in flight are given up on (their requests
       * aborted), their jobs handed back.
       */
      stop: Stop
    },
  ) {
    const { counters } = deps
    this.#settled = new CoalescedWrites(async (items) => {
      // The retries first: a payload marked settled always has its retry in the server.
      const retries = items.flatMap((item) => (item.retry ? [item.retry] : []))
      if (retries.length > 0) await deps.add(retries)
      await counters.settle(items.map((item) => item.mark), SETTLED_TTL_MS)
    })
    this.#forgotten = new CoalescedWrites((jobs) => counters.forget(jobs))
    this.#counted = deps.retention === undefined ? undefined : new CompletedCounts(() => counters.keptCounts(), deps.retention, (error) => this.#failed('queue server (payloads counted for replay)', error))
  }

  /** Runs `job`: when payloads are kept in the jobs, resolves with how each payload settled (see `Letter`). */
  process(job: Job, token: string | undefined): Promise<string | undefined> {
    return job.name === 'batch' ? this.#batch(job, token) : this.#deliver(job, token)
  }

  /**
   * A job completed (the server has recorded it, with `result`): a `batch` job's marks are no
   * longer needed; what settled in it is counted when kept in the jobs. Not waited for
   * (`forgotten`, `counted`); if this process dies first, the marks expire (and the counts are
   * lost: the payloads are still kept, and a replay may count fewer as no longer kept).
   */
  completed(job: Job, result: unknown): void {
    this.#counted?.completed(job, result)
    if (job.name !== 'batch') return
    this.#forgotten.write([[jobKey(job), (job.data as BatchData).d.length]]).catch((error: unknown) => this.#failed('queue server (settled marks)', error))
  }

  #failed(where: string, error: unknown): void {
    this.deps.report(where, error instanceof Error ? error : new Error(String(error)))
  }

  /** Resolves once the counts of the jobs completed so far are written (before closing the connection). */
  async counted(): Promise<void> {
    await this.#counted?.written()
  }

  /** Attempts in flight now (requests to a destination started, their outcome not known yet). */
  get inFlight(): number {
    return this.#inFlight
  }

  /** Resolves once every late outcome owed (a traced URL still answering) is reported. */
  lateOutcomes(): Promise<void> {
    return this.#late.idle()
  }

  /** Resolves once the marks of the jobs completed so far are dropped (before closing the connection). */
  async forgotten(): Promise<void> {
    await this.#forgotten.write([]).catch(() => {})
  }

  /** Later: a source this process does not know (configurations differ), or the process is closing. */
  async #handBack(job: Job, token: string | undefined, delayMs: number): Promise<never> {
    await job.moveToDelayed(Date.now() + delayMs, token)
    throw new this.deps.bullmq.DelayedError()
  }

  async #batch(job: Job, token: string | undefined): Promise<string | undefined> {
    const { s: source, d: items } = job.data as BatchData
    const destination = this.deps.destinations.get(source)
    if (destination === undefined) return this.#handBack(job, token, 5_000)
    const key = jobKey(job)
    const done = new Set<number>()
    const letters: Letter[] = items.map(() => '-')
    if (job.attemptsStarted > 1 || job.stalledCounter > 0) {
      // A re-run: what an earlier run settled is marked (with how); the payload in flight when
      // its process died may have had its retry added before the mark was written.
      const { queue, counters } = this.deps
      for (const [i, letter] of await counters.settledOf(key, items.length)) {
        done.add(i)
        if (letter === 'd' || letter === 'f' || letter === 'r') letters[i] = letter
      }
      const added = await Promise.all(items.map((_, i) => (done.has(i) ? undefined : queue.getJob(`${job.id}-${i}`))))
      added.forEach((retry, i) => retry && (done.add(i), (letters[i] = 'r')))
    }
    const todo = items.flatMap((_, i) => (done.has(i) ? [] : [i]))
    // Claims are made in the pacer's turn, as its first attempt is: not while ingest has the loop.
    await this.deps.pacer.turn()
    if (this.deps.closing()) return this.#handBack(job, token, 0)
    // Owned by the job's key, not its id alone: an id used again (a queue emptied) is another job.
    const { attempt, duplicates } = await claimIds(this.deps.counters, source, key, items, todo)
    if (duplicates.length > 0) {
      // Marked too: a re-run does not count them again.
      await this.#settled.write(duplicates.map((i) => ({ mark: [key, i, '-'] })))
      this.deps.tally.deduplicated(source, duplicates.length)
      this.deps.counters.add(`${source}|pending`, -duplicates.length)
    }
    for (const i of attempt) {
      if (this.deps.closing()) return this.#handBack(job, token, 0)
      const [type, body, , traceId, acceptedAt, urls, wasFailed] = items[i]
      const data: DeliverData = { s: source, t: type, b: body, n: 0, a: acceptedAt ?? job.timestamp, ...(traceId != null && { r: traceId }), ...(urls != null && { u: urls }), ...(wasFailed !== undefined && { w: wasFailed }) }
      const outcome = await this.#attempt(destination, data)
      if (outcome === STOPPED) return this.#handBack(job, token, 0)
      letters[i] = 'retry' in outcome ? 'r' : outcome.delivered ? 'd' : 'f'
      // Recorded before the next attempt starts: at any time, at most this one payload of the job
      // is unrecorded. The retry's id is derived from the batch's: re-added, it is the same job.
      await this.#settled.write([{
        mark: [key, i, letters[i]],
        ...('retry' in outcome && { retry: { name: 'deliver', data: outcome.retry, opts: { ...JOB_OPTIONS, jobId: `${job.id}-${i}`, delay: outcome.delay } } }),
      }])
    }
    return this.#settledAs(letters.join(''))
  }

  async #deliver(job: Job, token: string | undefined): Promise<string | undefined> {
    const data = job.data as DeliverData
    const destination = this.deps.destinations.get(data.s)
    if (destination === undefined) return this.#handBack(job, token, 5_000)
    // Due inside the window but run after it (no process ran it in time: they were all stopped,
    // or busy): failed for good, not attempted, as a retry scheduled past the window would be.
    // Taken as it came due (a retry due just before the window's end), it is attempted.
    const promptly = data.d !== undefined && Date.now() - data.d <= PICKUP_GRACE_MS
    const tooLate = data.f === undefined || promptly ? undefined : destination.retryTooLate(data.f)
    if (tooLate !== undefined) {
      this.#expired(data, tooLate)
      return this.#settledAs('f')
    }
    const outcome = await this.#attempt(destination, data)
    if (outcome === STOPPED) return this.#handBack(job, token, 0)
    if (!('retry' in outcome)) return this.#settledAs(outcome.delivered ? 'd' : 'f')
    await job.updateData(outcome.retry)
    await job.moveToDelayed(Date.now() + outcome.delay, token)
    throw new this.deps.bullmq.DelayedError()
  }

  /** A job's return value: how its payloads settled, when they are kept in the jobs. */
  #settledAs(letters: string): string | undefined {
    return this.deps.retention === undefined ? undefined : letters
  }

  /** A retry whose window ended before it could start: failed after the attempts it had. */
  #expired(data: DeliverData, why: string): void {
    const { counters, tally, log } = this.deps
    log(`${data.s}: ${data.t} failed after ${count(data.n, 'attempt')}: no retry: ${why}.`)
    if (data.r !== undefined) this.deps.traces?.(data.r, { source: data.s, body: data.b }).settled(false, [])
    tally.failed(data.s)
    counters.add(`${data.s}|pending`, -1)
    counters.add(`${data.s}|retrying`, -1)
  }

  /**
   * One attempt of a delivery whose previous attempts are described by `data`: settled (counted,
   * traced) or, when another attempt is worth it, that attempt's data and delay.
   */
  async #attempt(destination: WebhookDestination, data: DeliverData): Promise<Outcome | typeof STOPPED> {
    const { counters, tally, log, pacer, stop } = this.deps
    await pacer.admit()
    if (this.deps.closing()) {
      pacer.release()
      return STOPPED
    }
    const attempt = data.n + 1
    const trace = data.r === undefined ? undefined : this.deps.traces?.(data.r, { source: data.s, body: data.b })
    if (trace) {
      const all = destination.urls
      trace.attempt(attempt, data.u ? data.u.map((i) => all[i]).filter((url) => url !== undefined) : all)
    }
    const startedAt = Date.now()
    this.#inFlight++
    // A URL still answering once another delivered reports its outcome later, to the same trace.
    const late = trace && this.#late.follow((result) => trace.late(result))
    const attempted = destination.attempt(data.b, { attempt, signal: stop, ...(data.u && { urls: data.u }), ...(late && { onLate: late.onLate }) }).finally(() => {
      this.#inFlight--
      pacer.release()
    })
    const outcome = await orStopped(attempted, stop)
    if (outcome === STOPPED) return STOPPED
    late?.settled(outcome.results)
    const wasRetrying = data.f !== undefined
    const delay = outcome.deliveredBy >= 0 ? undefined : destination.nextRetryDelay(outcome, attempt, data.f ?? startedAt)
    if (delay === undefined) {
      const delivered = outcome.deliveredBy >= 0
      if (!delivered) log(`${data.s}: ${data.t} failed after ${count(attempt, 'attempt')}: ${destination.failure(outcome, data.f ?? startedAt).message}`)
      trace?.settled(delivered, outcome.results)
      if (delivered) tally.forwarded(data.s)
      else tally.failed(data.s)
      counters.add(`${data.s}|pending`, -1)
      if (wasRetrying) counters.add(`${data.s}|retrying`, -1)
      return { delivered }
    }
    tally.retried(data.s)
    if (!wasRetrying) counters.add(`${data.s}|retrying`, 1)
    log(`${data.s}: attempt ${attempt} failed (${outcome.error?.message ?? 'unknown'}); retry in ${delay} ms`)
    trace?.retry(attempt, outcome.results, delay)
    return { retry: { ...data, n: attempt, f: data.f ?? startedAt, u: outcome.retry, d: Date.now() + delay }, delay }
  }
}
