/**
 * `BullmqQueue`: deliveries in a queue server (Redis, or PostgreSQL through BullMQ's Postgres
 * backend), shared by every collector process that names the same server.
 *
 * Job granularity, for ingest speed: an accepted request becomes ONE durable `batch` job holding
 * its deliveries' exact texts (added before the 200). Any process's worker fans it out, off the
 * request path, into one `deliver` job per payload (ids derived from the batch's, so a fan-out
 * redone after a crash adds nothing twice; de-duplication by (source, messageId) for 24 hours is
 * BullMQ's own, in the server). A `deliver` job makes ONE attempt (`WebhookDestination.attempt`);
 * a retry is the same job moved to the delayed set, its data carrying the attempt count, the
 * first attempt's time (the 4-hour window survives restarts) and the URLs still worth trying.
 * A process killed mid-attempt loses its job locks; another process's worker takes the jobs
 * over (at-least-once).
 *
 * Counters (pending, retrying, forwarded, failed, deduplicated) live in the server too, so every
 * process reads the same numbers; `counts()` answers from a snapshot refreshed in the background.
 */
import type { Logger } from '../../logger.js'
import type { WebhookDestination } from '../../webhooks/index.js'
import type { QueueServer } from '../config.js'
import type { DeliveryTally } from '../stats.js'
import type { BacklogCounts, DeliveryQueue, DrainOutcome, QueuedDelivery, TraceSink } from './queue.js'
import { DEDUP_TTL_MS } from '../ingest/dedup.js'
import type { SharedState } from '../state/shared-state.js'

type Bullmq = typeof import('bullmq')
type Job = import('bullmq').Job
type Queue = import('bullmq').Queue
type Worker = import('bullmq').Worker

/** The BullMQ queue every collector shares. */
export const QUEUE_NAME = 'isomorphic-analytics-deliveries'

interface Opened {
  bullmq: Bullmq
  queue: Queue
  worker: Worker
  counters: SharedState
}

interface BatchData {
  s: string
  /** Each delivery: its type, exact body, its messageId (messages only) and its traceId (when traced). */
  d: Array<[type: string, body: string, messageId: string | null, traceId?: string | null]>
}

interface DeliverData {
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

// A computed specifier: bundlers for workers and browsers do not follow it (BullMQ is Node-only).
const BULLMQ = 'bullmq'

/** Loads BullMQ (an optional peer dependency) only when a `queue` is configured. */
async function loadBullmq(server: QueueServer): Promise<Bullmq> {
  try {
    return (await import(/* webpackIgnore: true */ /* @vite-ignore */ BULLMQ)) as Bullmq
  } catch (cause) {
    const packages = server.kind === 'redis' ? 'bullmq ioredis' : 'bullmq pg'
    throw new Error(`The collector's \`queue\` option needs BullMQ: npm install ${packages}`, { cause })
  }
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
  readonly #ready: Promise<Opened>
  #snapshot: Record<string, number> = {}
  #refresh: ReturnType<typeof setInterval> | undefined
  #closing: Promise<DrainOutcome> | undefined

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
  }) {
    this.#counters = options.counters
    this.#traces = options.traces
    this.#server = options.server
    this.#destinations = new Map(options.destinations)
    this.#maxPending = options.maxPending
    this.#concurrency = options.concurrency
    this.#tally = options.tally
    this.#log = options.log
    this.#onError = options.onError
    this.#ready = this.#open()
    // A failed start is reported once; every enqueue then rejects with it (answered 500).
    this.#ready.catch((error) => this.#onError(error))
  }

  /** Resolves once connected and working; rejects when the server cannot be used. */
  async ready(): Promise<void> {
    await this.#ready
  }

  async #open(): Promise<Opened> {
    const bullmq = await loadBullmq(this.#server)
    const connection = this.#connection()
    const backend = this.#server.kind === 'postgres' ? bullmq.createPostgresBackend : undefined
    const queue: Queue = backend
      ? new bullmq.Queue(QUEUE_NAME, { connection } as never, backend as never)
      : new bullmq.Queue(QUEUE_NAME, { connection } as never)
    queue.on('error', (error) => this.#report('queue server', error))
    const counters = this.#counters
    const workerOptions = {
      connection,
      concurrency: this.#concurrency,
      // A killed process's jobs go back to the others once its locks expire (renewed every 3 s
      // while an attempt runs; an attempt takes at most the 5 s webhook timeout anyway).
      lockDuration: 6_000,
      stalledInterval: 3_000,
      // Never fail a delivery for its process dying (PostgreSQL keeps this in an `integer`).
      maxStalledCount: 1_000_000,
      autorun: true,
    }
    const processor = (job: Job, token?: string) => this.#process(bullmq, queue, job, token)
    const worker: Worker = backend
      ? new bullmq.Worker(QUEUE_NAME, processor, workerOptions as never, backend as never)
      : new bullmq.Worker(QUEUE_NAME, processor, workerOptions as never)
    worker.on('error', (error) => this.#report('queue worker', error))
    await queue.waitUntilReady()
    await worker.waitUntilReady()
    this.#snapshot = await counters.read()
    this.#refresh = setInterval(() => {
      counters.flush().then(() => counters.read()).then(
        (values) => (this.#snapshot = values),
        (error: unknown) => this.#log(`queue server counters: ${error instanceof Error ? error.message : String(error)}`),
      )
    }, 250)
    ;(this.#refresh as { unref?: () => void }).unref?.()
    return { bullmq, queue, worker, counters }
  }

  #lastReport = ''
  #lastReportAt = 0

  /** A background failure of the queue server or worker: reported (once per 10 s while it repeats). */
  #report(where: string, error: Error): void {
    const line = `${where}: ${error.message}`
    this.#log(line)
    const now = Date.now()
    if (line === this.#lastReport && now - this.#lastReportAt < 10_000) return
    this.#lastReport = line
    this.#lastReportAt = now
    this.#onError(new Error(`The collector's ${line}`, { cause: error }))
  }

  #connection(): unknown {
    // `migrate`: BullMQ creates or updates its tables on first connect.
    if (this.#server.kind === 'postgres') return { connectionString: this.#server.url, migrate: true }
    const url = new URL(this.#server.url)
    return {
      host: url.hostname,
      port: Number(url.port || 6379),
      ...(url.username && { username: decodeURIComponent(url.username) }),
      ...(url.password && { password: decodeURIComponent(url.password) }),
      ...(url.pathname.length > 1 && { db: Number(url.pathname.slice(1)) }),
      ...(url.protocol === 'rediss:' && { tls: {} }),
      maxRetriesPerRequest: null,
    }
  }

  async enqueue(deliveries: readonly QueuedDelivery[], options?: { ignoreLimit?: boolean }): Promise<boolean> {
    if (deliveries.length === 0) return true
    const { queue, counters } = await this.#ready
    if (this.#closing !== undefined) throw new Error('The collector is closing; deliveries are no longer taken.')
    const bySource = new Map<string, QueuedDelivery[]>()
    for (const d of deliveries) {
      if (!this.#destinations.has(d.source)) throw new Error(`No Webhooks destination for source ${JSON.stringify(d.source)}.`)
      let list = bySource.get(d.source)
      if (list === undefined) bySource.set(d.source, (list = []))
      list.push(d)
    }
    if (!options?.ignoreLimit) {
      for (const [source, list] of bySource) if (this.#pendingOf(source) + list.length > this.#maxPending) return false
    }
    await queue.addBulk(
      [...bySource].map(([source, list]) => ({
        name: 'batch',
        data: { s: source, d: list.map((d) => [d.type, d.body, d.messageId ?? null, d.traceId ?? null]) } satisfies BatchData,
        opts: { removeOnComplete: true, removeOnFail: 1000, attempts: 1 },
      })),
    )
    for (const [source, list] of bySource) {
      counters.add(`${source}|pending`, list.length)
      this.#snapshot[`${source}|pending`] = (this.#snapshot[`${source}|pending`] ?? 0) + list.length
    }
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

  async sharedCounts(): Promise<Record<string, number>> {
    const { counters } = await this.#ready
    await counters.flush()
    return counters.read()
  }

  async #process(bullmq: Bullmq, queue: Queue, job: Job, token: string | undefined): Promise<void> {
    if (job.name === 'batch') return this.#fanOut(queue, job)
    return this.#deliver(bullmq, job, token)
  }

  async #fanOut(queue: Queue, job: Job): Promise<void> {
    const { s: source, d } = job.data as BatchData
    const jobs = d.map(([type, body, messageId, traceId], i) => ({
      name: 'deliver',
      data: { s: source, t: type, b: body, n: 0, ...(traceId != null && { r: traceId }) } satisfies DeliverData,
      opts: {
        jobId: `${job.id}-${i}`,
        removeOnComplete: true,
        removeOnFail: 1000,
        attempts: 1,
        ...(messageId !== null && { deduplication: { id: `${source}\u001f${messageId}`, ttl: DEDUP_TTL_MS } }),
      },
    }))
    const added = await queue.addBulk(jobs)
    const { counters } = await this.#ready
    let duplicates = 0
    added.forEach((j, i) => {
      if (j.id !== jobs[i].opts.jobId) duplicates++
    })
    if (duplicates > 0) {
      this.#tally.deduplicated(source, duplicates)
      counters.add(`${source}|pending`, -duplicates)
    }
  }

  async #deliver(bullmq: Bullmq, job: Job, token: string | undefined): Promise<void> {
    const data = job.data as DeliverData
    const destination = this.#destinations.get(data.s)
    const { counters } = await this.#ready
    if (destination === undefined) {
      // A source this process does not know (configurations differ): leave it to one that does.
      await job.moveToDelayed(Date.now() + 5_000, token)
      throw new bullmq.DelayedError()
    }
    const attempt = data.n + 1
    const startedAt = Date.now()
    const trace = data.r === undefined ? undefined : this.#traces?.(data.r)
    if (trace) {
      const all = destination.urls
      trace.attempt(attempt, data.u ? data.u.map((i) => all[i]).filter((url) => url !== undefined) : all)
    }
    const outcome = await destination.attempt(data.b, { attempt, ...(data.u && { urls: data.u }) })
    const wasRetrying = data.f !== undefined
    if (outcome.deliveredBy >= 0) {
      trace?.settled(true, outcome.results)
      return this.#settled(counters, data, true, wasRetrying)
    }
    const first = data.f ?? startedAt
    const delay = destination.nextRetryDelay(outcome, attempt, first)
    if (delay === undefined) {
      this.#log(`${data.s}: ${data.t} failed after ${attempt} attempt(s): ${outcome.error?.message ?? 'unknown'}`)
      trace?.settled(false, outcome.results)
      return this.#settled(counters, data, false, wasRetrying)
    }
    this.#tally.retried(data.s)
    if (!wasRetrying) counters.add(`${data.s}|retrying`, 1)
    this.#log(`${data.s}: attempt ${attempt} failed (${outcome.error?.message ?? 'unknown'}); retry in ${delay} ms`)
    trace?.retry(attempt, outcome.results, delay)
    await job.updateData({ ...data, n: attempt, f: first, u: outcome.retry } satisfies DeliverData)
    await job.moveToDelayed(Date.now() + delay, token)
    throw new bullmq.DelayedError()
  }

  #settled(counters: SharedState, data: DeliverData, delivered: boolean, wasRetrying: boolean): void {
    if (delivered) this.#tally.forwarded(data.s)
    else this.#tally.failed(data.s)
    counters.add(`${data.s}|pending`, -1)
    if (wasRetrying) counters.add(`${data.s}|retrying`, -1)
  }

  close(timeoutMs: number): Promise<DrainOutcome> {
    this.#closing ??= this.#drain(timeoutMs)
    return this.#closing
  }

  async #drain(timeoutMs: number): Promise<DrainOutcome> {
    clearInterval(this.#refresh)
    let opened: Opened
    try {
      opened = await this.#ready
    } catch {
      return { drained: true, pending: 0 }
    }
    const { queue, worker, counters } = opened
    // Stop taking jobs; let attempts in flight finish within the bound. Jobs not finished stay in
    // the server (their locks expire and another process, or the next start, takes them).
    let timer: ReturnType<typeof setTimeout> | undefined
    const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    const drained = await Promise.race([worker.close().then(() => true as const), bound])
    clearTimeout(timer)
    if (!drained) void worker.close(true).catch(() => {})
    await counters.flush().catch(() => {})
    await Promise.all([queue.close().catch(() => {}), counters.close().catch(() => {})])
    return { drained, pending: 0 }
  }
}
