/**
 * `BullmqQueue`: deliveries in a queue server (Redis, or PostgreSQL through BullMQ's Postgres
 * backend), shared by every collector process that names the same server.
 *
 * Job granularity, for ingest speed: an accepted request becomes ONE durable `batch` job holding
 * its deliveries' exact texts (added before the 200: one round trip; requests that arrive during
 * a write share the next one, their jobs merged, see `mergeBatchJobs`). Any process's worker makes
 * the first attempt of each of its payloads, off the request path; only those to retry become
 * `deliver` jobs (`bullmq-jobs.ts`: the attempts, the retry schedule, de-duplication and the
 * duplicate bound after a kill). A process killed mid-attempt loses its job locks; another
 * process's worker takes the jobs over (at-least-once).
 *
 * Counters (pending, retrying, forwarded, failed, deduplicated) live in the server too, so every
 * process reads the same numbers; `counts()` answers from a snapshot refreshed in the background.
 */
import type { Logger } from '../../logger.js'
import { messageOf } from '../../errors.js'
import { Stop } from '../../transport/stop.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import type { QueueServer } from '../config.js'
import { bullmqQueue, bullmqWorker, checkRedisDatabase, loadBullmq, reconnectDelay } from '../state/drivers.js'
import type { SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'
import { oncePer } from '../once-per.js'
import { settlesWithin, valueWithin } from '../settles-within.js'
import { reconcilePending, refreshCounts } from './pending-counts.js'
import { CoalescedWrites } from './coalesced-writes.js'
import { Pacer } from './pacer.js'
import { addJobs, BATCH_JOB_OPTIONS, JobRunner, type NewJob } from './bullmq-jobs.js'
import { workerErrors } from './worker-errors.js'
import { mergeBatchJobs, type BatchJob } from './batch-merge.js'
import { QUEUE_WRITE_WAIT_MS, QueueUnavailableError, writeDeadline, writeInTime, type BacklogCounts, type DeliveryQueue, type DrainOutcome, type EnqueueOptions, type QueuedDelivery, type TraceSink } from './queue.js'

type Bullmq = typeof import('bullmq')
type Job = import('bullmq').Job
type Queue = import('bullmq').Queue
type Worker = import('../state/bullmq-worker.js').CollectorWorker

/** The BullMQ queue every collector shares. */
export const QUEUE_NAME = 'isomorphic-analytics-deliveries'

interface Opened {
  bullmq: Bullmq
  queue: Queue
  worker: Worker
  runner: JobRunner
  counters: SharedState
  /** `batch` jobs added by concurrent requests, together (`addJobs`). */
  adds: CoalescedWrites<BatchJob>
}

export class BullmqQueue implements DeliveryQueue {
  readonly durable = true
  readonly #server: QueueServer
  readonly #destinations: Map<string, WebhookDestination>
  readonly #maxPending: number
  readonly #concurrency: number
  readonly #tally: DeliveryTally
  readonly #log: Logger
  readonly #onError: (error: unknown) => void
  readonly #counters: SharedState
  readonly #traces: TraceSink | undefined
  readonly #startAfter: Promise<unknown>
  readonly #ready: Promise<Opened>
  /** What `#ready` resolved with, once it has. */
  #opened: Opened | undefined
  /** BullMQ's parts as soon as they exist (before they are connected), for `#disconnect`. */
  #opening: { queue: Queue; worker: Worker } | undefined
  /** The drain gave up waiting for the server: BullMQ's parts are dropped as soon as they exist. */
  #abandoned = false
  /** Drops the connection checking a Redis database (`checkRedisDatabase`). */
  #dropProbe: (() => void) | undefined
  /** Ends the wait before the next try to open (`#connect`), at `close`. */
  #wake: (() => void) | undefined
  readonly #pacer: Pacer
  #snapshot: Record<string, number> = {}
  #refresh: ReturnType<typeof setInterval> | undefined
  #closing: Promise<DrainOutcome> | undefined
  /** Aborted at the drain's bound: attempts still in flight are given up on. */
  readonly #stop = new Stop()

  constructor(options: {
    server: QueueServer
    destinations: ReadonlyMap<string, WebhookDestination>
    concurrency: number
    maxPending: number
    tally: DeliveryTally
    log: Logger
    onError: (error: unknown) => void
    /** Counters in the queue server, shared with the collector's `Tally`. */
    counters: SharedState
    /** Where attempts on deliveries with a `traceId` are reported. */
    traces?: TraceSink
    /**
     * No attempt starts before this settles: the settings saved in a shared store are applied by
     * then, so a job taken at start goes to the saved URLs, not the config's.
     */
    startAfter?: Promise<unknown>
  }) {
    this.#counters = options.counters
    this.#startAfter = options.startAfter ?? Promise.resolve()
    this.#traces = options.traces
    this.#server = options.server
    this.#destinations = new Map(options.destinations)
    this.#maxPending = options.maxPending
    this.#concurrency = options.concurrency
    this.#pacer = new Pacer(options.concurrency)
    this.#tally = options.tally
    this.#log = options.log
    this.#onError = options.onError
    this.#ready = this.#connect()
    // BullMQ missing is for good: reported once; every enqueue then rejects with it (answered 500).
    this.#ready.catch((error) => this.#closing === undefined && this.#onError(error))
  }

  /** Resolves once connected and working; rejects when BullMQ is missing, or at `close` before that. */
  async ready(): Promise<void> {
    await this.#ready
  }

  /**
   * Opens the queue, trying again until it works, a second apart at most, each failure reported
   * (once per 10 s while it repeats): a server away at start-up, a PostgreSQL database or role
   * not created yet, a Redis that refuses the database. BullMQ keeps a failed first connection
   * to PostgreSQL for good, so each try makes its parts anew; meanwhile senders are answered 503.
   * Ends at `close`.
   */
  async #connect(): Promise<Opened> {
    const bullmq = await loadBullmq(this.#server)
    for (let times = 1; ; times++) {
      try {
        return await this.#open(bullmq)
      } catch (error) {
        this.#dropParts()
        if (this.#closing !== undefined) throw error
        this.#report('queue server', error as Error)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, reconnectDelay(times))
          this.#wake = () => (clearTimeout(timer), resolve())
        })
        if (this.#closing !== undefined) throw new Error('The collector closed before its queue server could be opened.')
      }
    }
  }

  async #open(bullmq: Bullmq): Promise<Opened> {
    // Before any part of BullMQ connects (a refused SELECT leaves a client in database 0).
    // A close() that came while the check was being set up drops it at once: it would wait for
    // an unreachable server for ever.
    await checkRedisDatabase(this.#server, (drop) => {
      this.#dropProbe = drop
      if (this.#closing !== undefined) drop()
    })
    if (this.#closing !== undefined) throw new Error('The collector closed before its queue server could be opened.')
    const queue: Queue = bullmqQueue(bullmq, this.#server, QUEUE_NAME)
    queue.on('error', (error) => this.#report('queue server', error))
    const counters = this.#counters
    const workerOptions = {
      concurrency: this.#concurrency,
      // A killed process's jobs go back to the others once its locks expire (renewed every 3 s
      // while an attempt runs; an attempt takes at most the 5 s webhook timeout anyway).
      lockDuration: 6_000,
      stalledInterval: 3_000,
      // Never fail a delivery for its process dying (PostgreSQL keeps this in an `integer`).
      maxStalledCount: 1_000_000,
      autorun: true,
    }
    const server = this.#server.kind
    const add = (jobs: readonly NewJob[]) => addJobs(queue, jobs, server)
    const runner = new JobRunner({
      bullmq,
      queue,
      add,
      destinations: this.#destinations,
      counters,
      tally: this.#tally,
      log: this.#log,
      report: (where, error) => this.#report(where, error),
      traces: this.#traces,
      closing: () => this.#closing !== undefined,
      stop: this.#stop,
      pacer: this.#pacer,
    })
    const startAfter = this.#startAfter
    /** The jobs whose processor is running here (see `workerErrors`). */
    const processing = new Set<string>()
    const processor = async (job: Job, token?: string) => {
      await startAfter
      processing.add(job.id!)
      try {
        return await runner.process(job, token)
      } finally {
        processing.delete(job.id!)
      }
    }
    const worker: Worker = bullmqWorker(bullmq, this.#server, QUEUE_NAME, processor, workerOptions)
    this.#opening = { queue, worker }
    // The drain gave up on the server while BullMQ was loading: these are dropped as made.
    if (this.#abandoned) this.#disconnect()
    worker.on('error', workerErrors(processing, (error) => this.#report('queue worker', error), this.#log))
    // A job whose processing failed (the queue server's trouble, not a receiver's): a `batch` job
    // runs again later, skipping what it marked settled.
    worker.on('failed', (job, error) => this.#report(`queue job ${job?.name ?? ''}`, error))
    worker.on('completed', (job) => runner.completed(job))
    await queue.waitUntilReady()
    await worker.waitUntilReady()
    const failed = (error: unknown) => this.#log(`queue server counters: ${messageOf(error)}`)
    await reconcilePending(queue, counters).catch(failed)
    this.#snapshot = await counters.read()
    this.#refresh = refreshCounts(queue, counters, (values) => (this.#snapshot = values), failed)
    const adds = new CoalescedWrites<BatchJob>((jobs) => add(mergeBatchJobs(jobs)))
    return (this.#opened = { bullmq, queue, worker, runner, counters, adds })
  }

  readonly #reportable = oncePer(10_000)

  /** A request's write (or read) the queue server failed: reported as its trouble, unless `close()` caused it. */
  readonly #writeFailure = { closing: () => this.#closing !== undefined, report: (error: Error) => this.#report('queue server', error) }

  /** A background failure of the queue server or worker: reported (once per 10 s while it repeats). */
  #report(where: string, error: Error): void {
    const line = `${where}: ${error.message}`
    this.#log(line)
    if (!this.#reportable(line)) return
    this.#onError(new Error(`The collector's ${line}`, { cause: error }))
  }

  async enqueue(deliveries: readonly QueuedDelivery[], options?: EnqueueOptions): Promise<boolean> {
    if (deliveries.length === 0) return true
    // Attempts yield to ingest while this runs (see `Pacer`), unless requests are being refused.
    this.#pacer.ingestStarted()
    let outcome: 'accepted' | 'refused' | 'failed' = 'failed'
    try {
      const accepted = await this.#add(deliveries, options)
      outcome = accepted ? 'accepted' : 'refused'
      return accepted
    } finally {
      this.#pacer.ingestEnded(outcome)
    }
  }

  async #add(deliveries: readonly QueuedDelivery[], options?: EnqueueOptions): Promise<boolean> {
    // One deadline for the connection and the write (a request's, when it has waited already).
    const by = options?.by ?? writeDeadline()
    // Once open, no bound (and no timer) for it on each request.
    const { adds, counters } = this.#opened ?? (await writeInTime(this.#ready, { by }))
    if (this.#closing !== undefined) throw new QueueUnavailableError('The collector is closing; deliveries are no longer taken.')
    const bySource = new Map<string, QueuedDelivery[]>()
    for (const d of deliveries) {
      if (!this.#destinations.has(d.source)) throw new Error(`No Webhooks destination for source ${JSON.stringify(d.source)}.`)
      let list = bySource.get(d.source)
      if (list === undefined) bySource.set(d.source, (list = []))
      list.push(d)
    }
    if (!options?.ignoreLimit) {
      // As in memory: a request larger than the whole limit is taken when nothing is pending.
      for (const [source, list] of bySource) {
        const pending = this.#pendingOf(source)
        if (pending > 0 && pending + list.length > this.#maxPending) return false
      }
    }
    // The request's time ran out before the write could start (its start-up took it): not written.
    if (Date.now() >= by) throw new QueueUnavailableError(`The queue server did not answer within ${QUEUE_WRITE_WAIT_MS / 1000} s.`)
    const jobs = [...bySource].map(([source, list]): BatchJob => ({
      name: 'batch',
      data: { s: source, d: list.map((d) => [d.type, d.body, d.messageId ?? null, d.traceId ?? null]) },
      opts: BATCH_JOB_OPTIONS,
    }))
    // Counted pending once written, even when that is after the sender was answered 503 (the jobs
    // are delivered all the same; the caller counts them accepted then, see `landed`).
    const written = adds.write(jobs).then(() => {
      for (const [source, list] of bySource) {
        counters.add(`${source}|pending`, list.length)
        this.#snapshot[`${source}|pending`] = (this.#snapshot[`${source}|pending`] ?? 0) + list.length
      }
    })
    await writeInTime(written, { failure: this.#writeFailure, by, lands: true })
    return true
  }

  #pendingOf(source: string): number {
    return Math.max(0, this.#snapshot[`${source}|pending`] ?? 0)
  }

  /**
   * Settings changed (the console): this process's next attempts for the source use
   * `destination`. Every process delivers with its own settings, so they must agree.
   */
  setDestination(source: string, destination: WebhookDestination): void {
    this.#destinations.set(source, destination)
  }

  counts(source?: string): BacklogCounts {
    let pending = 0
    let retrying = 0
    for (const name of this.#destinations.keys()) {
      if (source !== undefined && name !== source) continue
      pending += this.#pendingOf(name)
      retrying += Math.max(0, this.#snapshot[`${name}|retrying`] ?? 0)
    }
    return { pending, retrying }
  }

  /** Bounded like a write: a queue server away answers 503 (`QueueUnavailableError`), not a hang or a 500. */
  async sharedCounts(by = writeDeadline()): Promise<Record<string, number>> {
    const { counters } = await writeInTime(this.#ready, { by })
    return writeInTime(counters.flush().then(() => counters.read()), { failure: { ...this.#writeFailure, what: 'give its counts' }, by })
  }

  close(timeoutMs: number): Promise<DrainOutcome> {
    return (this.#closing ??= this.#drain(timeoutMs))
  }

  async #drain(timeoutMs: number): Promise<DrainOutcome> {
    const bound = Date.now() + timeoutMs
    clearInterval(this.#refresh)
    this.#wake?.()
    // A queue server never reached within the bound: nothing was taken from it, nothing to wait for.
    const opened = (await valueWithin(this.#ready.catch(() => undefined), timeoutMs))?.value
    if (opened === undefined) {
      this.#abandoned = true
      this.#disconnect()
      return { drained: true, pending: 0, stopped: 0, reached: false }
    }
    const { queue, worker, runner, counters } = opened
    // Stop taking jobs; let attempts in flight finish within the bound. Jobs not finished stay in
    // the server (their locks expire and another process, or the next start, takes them).
    const closed = worker.close()
    const drained = await settlesWithin(closed, timeoutMs)
    // URLs still answering after their message was delivered, within the same bound: their late
    // outcomes reach the other processes' consoles (the bus closes after this queue).
    if (drained) await settlesWithin(runner.lateOutcomes(), Math.max(0, bound - Date.now()))
    // What follows has the second after the bound, less room for closing the server and exiting.
    const teardownBy = Date.now() + 700
    const stopped = drained ? 0 : runner.inFlight
    if (!drained) {
      // Attempts still in flight are given up on (`stopped`): their jobs go back to the server at
      // once (not after their locks expire), within the second after the bound.
      this.#stop.abort()
      // Its `close` may never finish (a queue server gone: see `CollectorWorker`).
      if (!(await settlesWithin(closed, 500))) worker.abandon()
    }
    // Then the connections, politely within a bound: a queue server that went away answers none
    // of it, and the collector must still exit within its drain timeout (plus a second).
    const tidy = (async () => {
      await Promise.all([counters.flush().catch(() => {}), runner.forgotten()])
      await Promise.all([queue.close().catch(() => {}), counters.close().catch(() => {})])
    })()
    if (!(await settlesWithin(tidy, Math.max(0, teardownBy - Date.now())))) this.#disconnect()
    return { drained, pending: 0, stopped }
  }

  /**
   * Drops BullMQ's connections at once (its `close` waits for a server that may not answer):
   * `close(true)` first marks the parts closing (they stop retrying) and drops connections never
   * made ready (`disconnect` waits for them to be). PostgreSQL: every socket goes (`PgSockets`).
   */
  #disconnect(): void {
    this.#dropParts()
    void this.#counters.close().catch(() => {})
    this.#server.sockets?.drop()
  }

  /** Drops BullMQ's parts (those of a try to open that failed, or all of them at `#disconnect`). */
  #dropParts(): void {
    const { queue, worker } = this.#opening ?? {}
    this.#opening = undefined
    this.#dropProbe?.()
    void worker?.close(true).catch(() => {})
    void queue?.close().catch(() => {})
    for (const part of [queue, worker]) void part?.disconnect().catch(() => {})
  }
}
