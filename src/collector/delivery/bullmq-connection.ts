/**
 * `BullmqConnection`: a `BullmqQueue`'s parts in the queue server (see `bullmq-queue.ts`), opened
 * and dropped. Opening tries again until the server answers, and builds what the queue works with
 * (`Opened`): BullMQ's queue, a worker running the `JobRunner`, the shared counters read into the
 * queue's snapshot and kept fresh, the coalesced `batch` writes. Dropping is for a server that
 * went away: the drain cannot wait for it. Apart from the queue so that `BullmqQueue` reads as
 * what it does with those parts (writes, counts, the drain).
 */
import type { Logger } from '../../logger.js'
import { messageOf } from '../../errors.js'
import type { Stop } from '../../transport/stop.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import type { QueueServer } from '../config.js'
import { bullmqQueue, bullmqWorker, checkRedisDatabase, loadBullmq, reconnectDelay } from '../state/drivers.js'
import type { SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'
import { reconcilePending, refreshCounts } from './pending-counts.js'
import { CoalescedWrites } from './coalesced-writes.js'
import type { Pacer } from './pacer.js'
import { addJobs, type NewJob } from './bullmq-job-data.js'
import { JobRunner } from './bullmq-jobs.js'
import { workerErrors } from './worker-errors.js'
import { mergeBatchJobs, type BatchJob } from './batch-merge.js'
import type { TraceSink } from './queue.js'
import { redisSettingsWarnings, watchRedisData, type RedisCommands } from './redis-durability.js'

type Bullmq = typeof import('bullmq')
type Job = import('bullmq').Job
type Queue = import('bullmq').Queue
type Worker = import('../state/bullmq-worker.js').CollectorWorker

/** The BullMQ queue every collector shares. */
export const QUEUE_NAME = 'isomorphic-analytics-deliveries'

export interface Opened {
  bullmq: Bullmq
  queue: Queue
  worker: Worker
  runner: JobRunner
  counters: SharedState
  /** `batch` jobs added by concurrent requests, together (`addJobs`). */
  adds: CoalescedWrites<BatchJob>
}

export class BullmqConnection {
  /** What `connect` resolved with, once it has. */
  #opened: Opened | undefined
  /** BullMQ's parts as soon as they exist (before they are connected), for `disconnect`. */
  #opening: { queue: Queue; worker: Worker } | undefined
  /** The drain gave up waiting for the server: BullMQ's parts are dropped as soon as they exist. */
  #abandoned = false
  /** Drops the connection checking a Redis database (`checkRedisDatabase`). */
  #dropProbe: (() => void) | undefined
  /** Ends the wait before the next try to open (`connect`), at `close`. */
  #wake: (() => void) | undefined
  #refresh: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly deps: {
      server: QueueServer
      /** The queue's own map: `setDestination` changes what the next attempts use. */
      destinations: ReadonlyMap<string, WebhookDestination>
      concurrency: number
      tally: DeliveryTally
      log: Logger
      counters: SharedState
      traces: TraceSink | undefined
      /** No attempt starts before this settles (see `BullmqQueue`). */
      startAfter: Promise<unknown>
      pacer: Pacer
      /** Aborted at the drain's bound: attempts still in flight are given up on. */
      stop: Stop
      /** A background failure of the queue server or worker (`BullmqQueue`'s, once per 10 s). */
      report: (where: string, error: Error) => void
      /** Whether `close` has been called. */
      closing: () => boolean
      /** Takes the shared counters each time they are read. */
      snapshot: (values: Record<string, number>) => void
      /** How long settled payloads are kept for replay (ms), in the completed jobs, when they are (../replay/kept-jobs.ts). */
      retention: number | undefined
    },
  ) {}

  /** The parts, once `connect` has opened them. */
  get opened(): Opened | undefined {
    return this.#opened
  }

  /**
   * Opens the queue, trying again until it works, a second apart at most, each failure reported
   * (once per 10 s while it repeats): a server away at start-up, a PostgreSQL database or role
   * not created yet, a Redis that refuses the database. BullMQ keeps a failed first connection
   * to PostgreSQL for good, so each try makes its parts anew; meanwhile senders are answered 503.
   * Ends at `close`.
   */
  async connect(): Promise<Opened> {
    const bullmq = await loadBullmq(this.deps.server)
    for (let times = 1; ; times++) {
      try {
        return await this.#open(bullmq)
      } catch (error) {
        this.#dropParts()
        if (this.deps.closing()) throw error
        this.deps.report('queue server', error as Error)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, reconnectDelay(times))
          this.#wake = () => (clearTimeout(timer), resolve())
        })
        if (this.deps.closing()) throw new Error('The collector closed before its queue server could be opened.')
      }
    }
  }

  async #open(bullmq: Bullmq): Promise<Opened> {
    // Before any part of BullMQ connects (a refused SELECT leaves a client in database 0).
    // A close() that came while the check was being set up drops it at once: it would wait for
    // an unreachable server for ever.
    await checkRedisDatabase(this.deps.server, (drop) => {
      this.#dropProbe = drop
      if (this.deps.closing()) drop()
    })
    if (this.deps.closing()) throw new Error('The collector closed before its queue server could be opened.')
    const queue: Queue = bullmqQueue(bullmq, this.deps.server, QUEUE_NAME)
    queue.on('error', (error) => this.deps.report('queue server', error))
    const counters = this.deps.counters
    const workerOptions = {
      concurrency: this.deps.concurrency,
      // A killed process's jobs go back to the others once its locks expire (renewed every 3 s
      // while an attempt runs; an attempt takes at most the 5 s webhook timeout anyway).
      lockDuration: 6_000,
      stalledInterval: 3_000,
      // Never fail a delivery for its process dying (PostgreSQL keeps this in an `integer`).
      maxStalledCount: 1_000_000,
      autorun: true,
      // Completed jobs hold the payloads kept for replay (../replay/kept-jobs.ts): kept for the
      // retention (BullMQ counts it from completion, which comes after acceptance). Else removed
      // at once (on Redis `{ count: 0 }`: BullMQ's scripts take no `true` from a worker).
      removeOnComplete: this.deps.retention !== undefined ? { age: Math.ceil(this.deps.retention / 1_000) } : this.deps.server.kind === 'postgres' ? true : { count: 0 },
    }
    const server = this.deps.server.kind
    const add = (jobs: readonly NewJob[]) => addJobs(queue, jobs, server)
    const runner = new JobRunner({
      bullmq,
      queue,
      add,
      destinations: this.deps.destinations,
      counters,
      ...(this.deps.retention !== undefined && { retention: this.deps.retention }),
      tally: this.deps.tally,
      log: this.deps.log,
      report: this.deps.report,
      traces: this.deps.traces,
      closing: this.deps.closing,
      stop: this.deps.stop,
      pacer: this.deps.pacer,
    })
    const startAfter = this.deps.startAfter
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
    const worker: Worker = bullmqWorker(bullmq, this.deps.server, QUEUE_NAME, processor, workerOptions)
    this.#opening = { queue, worker }
    // The drain gave up on the server while BullMQ was loading: these are dropped as made.
    if (this.#abandoned) this.disconnect()
    worker.on('error', workerErrors(processing, (error) => this.deps.report('queue worker', error), this.deps.log))
    // A job whose processing failed (the queue server's trouble, not a receiver's): a `batch` job
    // runs again later, skipping what it marked settled.
    worker.on('failed', (job, error) => this.deps.report(`queue job ${job?.name ?? ''}`, error))
    worker.on('completed', (job, result) => runner.completed(job, result))
    await queue.waitUntilReady()
    await worker.waitUntilReady()
    // In the background: the queue is usable whatever the check finds, or however long it takes.
    // (A command cut short by close() is no news.)
    if (this.deps.server.kind === 'redis') {
      this.#checkRedis(queue).catch((error: Error) => this.deps.closing() || this.deps.report('queue server', error))
    }
    const failed = (error: unknown) => this.deps.log(`queue server counters: ${messageOf(error)}`)
    await reconcilePending(queue, counters).catch(failed)
    this.deps.snapshot(await counters.read())
    // A close() that came while this opened has stopped the refreshing already (the drain's first
    // step): none starts, or it would read closed connections for as long as the process lives.
    if (!this.deps.closing()) this.#refresh = refreshCounts(queue, counters, this.deps.snapshot, failed)
    const adds = new CoalescedWrites<BatchJob>((jobs) => add(mergeBatchJobs(jobs)))
    return (this.#opened = { bullmq, queue, worker, runner, counters, adds })
  }

  /**
   * Redis: says plainly when it would lose deliveries answered 200 (no persistence, an eviction
   * policy), and watches for a loss (`redis-durability.ts`). Reported, never fatal.
   */
  async #checkRedis(queue: Queue): Promise<void> {
    const where = new URL(this.deps.server.url).host
    const report = (error: Error) => this.deps.report('queue server', error)
    const client = (await (queue.getBackend() as { client: Promise<unknown> }).client) as RedisCommands
    for (const warning of await redisSettingsWarnings(client, where)) report(new Error(warning))
    await watchRedisData(client, where, report)
  }

  /** At `close`: the shared counters are no longer read into the snapshot. */
  stopRefreshing(): void {
    clearInterval(this.#refresh)
  }

  /** At `close`: a wait before the next try to open ends now (`connect` then gives up). */
  wake(): void {
    this.#wake?.()
  }

  /** The drain gave up waiting for the server: what exists is dropped, and what is made later. */
  abandon(): void {
    this.#abandoned = true
    this.disconnect()
  }

  /**
   * Drops BullMQ's connections at once (its `close` waits for a server that may not answer):
   * `close(true)` first marks the parts closing (they stop retrying) and drops connections never
   * made ready (`disconnect` waits for them to be). PostgreSQL: every socket goes (`PgSockets`).
   */
  disconnect(): void {
    this.#dropParts()
    void this.deps.counters.close().catch(() => {})
    this.deps.server.sockets?.drop()
  }

  /** Drops BullMQ's parts (those of a try to open that failed, or all of them at `disconnect`). */
  #dropParts(): void {
    const { queue, worker } = this.#opening ?? {}
    this.#opening = undefined
    this.#dropProbe?.()
    void worker?.close(true).catch(() => {})
    void queue?.close().catch(() => {})
    for (const part of [queue, worker]) void part?.disconnect().catch(() => {})
  }
}
