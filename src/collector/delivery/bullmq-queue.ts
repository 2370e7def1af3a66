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
 *
 * This class is what the collector does with the queue: its writes, its counts and the drain at
 * `close`. Opening BullMQ's parts (trying again until the server answers) and dropping them when
 * the drain gives up on the server are `bullmq-connection.ts`.
 */
import type { Logger } from '../../logger.js'
import { Stop } from '../../transport/stop.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import type { QueueServer } from '../config.js'
import type { SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'
import { oncePer } from '../once-per.js'
import { settlesWithin, valueWithin } from '../settles-within.js'
import { Pacer } from './pacer.js'
import { BATCH_JOB_OPTIONS, type BatchData } from './bullmq-job-data.js'
import { BullmqConnection, type Opened } from './bullmq-connection.js'
import type { BatchJob } from './batch-merge.js'
import { keptInJobs } from '../replay/kept-jobs.js'
import type { KeptWindow } from '../replay/kept.js'
import { QUEUE_WRITE_WAIT_MS, QueueUnavailableError, writeDeadline, writeInTime, type BacklogCounts, type DeliveryQueue, type DrainOutcome, type EnqueueOptions, type QueuedDelivery, type TraceSink } from './queue.js'

export { QUEUE_NAME } from './bullmq-connection.js'

export class BullmqQueue implements DeliveryQueue {
  readonly durable = true
  readonly #destinations: Map<string, WebhookDestination>
  readonly #maxPending: number
  readonly #log: Logger
  readonly #onError: (error: unknown) => void
  /** BullMQ's parts in the queue server: opened, and dropped when the drain gives up on it. */
  readonly #connection: BullmqConnection
  readonly #ready: Promise<Opened>
  readonly #pacer: Pacer
  #snapshot: Record<string, number> = {}
  #closing: Promise<DrainOutcome> | undefined
  /** Aborted at the drain's bound: attempts still in flight are given up on. */
  readonly #stop = new Stop()
  readonly #retention: number | undefined

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
    /** Settled payloads are kept for replay this long (ms), in the completed jobs (none: not kept). */
    retention?: number
  }) {
    this.#destinations = new Map(options.destinations)
    this.#maxPending = options.maxPending
    this.#pacer = new Pacer(options.concurrency)
    this.#log = options.log
    this.#onError = options.onError
    this.#connection = new BullmqConnection({
      server: options.server,
      destinations: this.#destinations,
      concurrency: options.concurrency,
      tally: options.tally,
      log: options.log,
      counters: options.counters,
      traces: options.traces,
      startAfter: options.startAfter ?? Promise.resolve(),
      pacer: this.#pacer,
      stop: this.#stop,
      report: (where, error) => this.#report(where, error),
      closing: () => this.#closing !== undefined,
      snapshot: (values) => (this.#snapshot = values),
      retention: options.retention,
    })
    this.#retention = options.retention
    this.#ready = this.#connection.connect()
    // BullMQ missing is for good: reported once; every enqueue then rejects with it (answered 500).
    this.#ready.catch((error) => this.#closing === undefined && this.#onError(error))
  }

  /** Resolves once connected and working; rejects when BullMQ is missing, or at `close` before that. */
  async ready(): Promise<void> {
    await this.#ready
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
    const { adds, counters } = this.#connection.opened ?? (await writeInTime(this.#ready, { by }))
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
      data: { s: source, d: list.map((d): BatchData['d'][number] => (d.acceptedAt === undefined
        ? [d.type, d.body, d.messageId ?? null, d.traceId ?? null]
        : [d.type, d.body, d.messageId ?? null, d.traceId ?? null, d.acceptedAt, d.urls ?? null, d.wasFailed ? 1 : 0])) },
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

  /** A replay's window, from the payloads kept in the completed jobs (../replay/kept-jobs.ts). */
  async window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow> {
    const { queue, counters } = await writeInTime(this.#ready, { by: writeDeadline() })
    return keptInJobs(queue, await counters.keptCounts(), this.#retention!, { source, from, to, failedOnly })
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
    this.#connection.stopRefreshing()
    this.#connection.wake()
    // A queue server never reached within the bound: nothing was taken from it, nothing to wait for.
    const opened = (await valueWithin(this.#ready.catch(() => undefined), timeoutMs))?.value
    if (opened === undefined) {
      this.#connection.abandon()
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
      await Promise.all([counters.flush().catch(() => {}), runner.forgotten(), runner.counted()])
      await Promise.all([queue.close().catch(() => {}), counters.close().catch(() => {})])
    })()
    if (!(await settlesWithin(tidy, Math.max(0, teardownBy - Date.now())))) this.#connection.disconnect()
    return { drained, pending: 0, stopped }
  }
}
