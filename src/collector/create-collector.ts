/**
 * `createCollector(config)`: the ingest service as a fetch-style handler, plus deletion requests,
 * audience syncs, counters and a bounded drain. Web-standard globals only: it runs unchanged on
 * Node, Bun, Deno and workers.
 */
import { ClientClosedError } from '../errors.js'
import { count, createLogger, debugEnables, type Logger } from '../logger.js'
import { readDebugSetting } from '../platform/runtime.js'
import type { WebhookDestination } from '../webhooks/index.js'
import {
  requestDeletion,
  syncAudience,
  type AdminState,
  type AudienceSyncRequest,
  type DeletionRequest,
  type Dispatch,
} from './admin/requests.js'
import { RoomWaits } from './admin/room-waits.js'
import { AdminGuard } from './admin/guard.js'
import { resolveConfig, type CollectorConfig, type ResolvedConfig } from './config.js'
import { sharedSourceStats, sourceStats, statsReport, type StatsReport } from './admin/stats.js'
import { BullmqQueue } from './delivery/bullmq-queue.js'
import { MemoryQueue } from './delivery/memory-queue.js'
import { QUEUE_WRITE_WAIT_MS, writeDeadline, type DeliveryQueue } from './delivery/queue.js'
import { ConsoleRecorder, createConsole, createSourceSettings, memorySettings, shareConsole } from './console/index.js'
import { retriesByHand } from './console/retries.js'
import { DEDUP_TTL_MS, RecentMessageIds } from './ingest/dedup.js'
import { checkRequest, createHandler } from './http/handler.js'
import { withCore, type CollectorCore, type RequestHead } from './http/direct.js'
import { JsonAnswer } from './http/errors.js'
import { markReadiness } from './http/readiness.js'
import { markAdmin } from './http/exposure.js'
import { requestDeadline, setRequestDeadline } from './http/deadline.js'
import { createIngest, type AcceptedBatch } from './ingest/accept.js'
import { loadExactJson } from '../message/exact-json.js'
import { createSourceRuntime, type SourceRuntime } from './sources.js'
import { QueueBus } from './state/bus.js'
import { PgSockets } from './state/pg-sockets.js'
import { MemoryMemberships, SharedMemberships } from './state/memberships.js'
import { queueSettings } from './state/shared-settings.js'
import { SharedState } from './state/shared-state.js'
import { Tally } from './stats.js'
import { settlesWithin } from './settles-within.js'

/** (source, messageId) pairs remembered in memory for de-duplication, at most. */
const MAX_DEDUP_ENTRIES = 500_000
/**
 * How long `close()` may take past its drain timeout: less than the second within which a process
 * ends (README), which holds its exit too. With all of it, a process ended just past it.
 */
const TEARDOWN_MS = 800

/** What {@link Collector.stats} returns: the collector's counters since it was made. */
export interface CollectorStats {
  /** HTTP requests handled. */
  requests: number
  /** Requests answered with an error status. */
  rejected: number
  /** Messages accepted. */
  received: number
  /** Accepted messages not forwarded: no enabled destination, or turned off by `integrations`. */
  skipped: number
  /** analytics.js metrics requests (`POST /v1/m`) answered; they are not forwarded. */
  metrics: number
  /** When the latest accepted message arrived (ISO 8601), as recorded in its `receivedAt`. */
  lastReceivedAt: string | undefined
  /** Accepted messages not forwarded because they break the source's tracking plan. */
  blocked: number
  /** Payloads a webhook URL accepted (messages, deletions and audience identifies). */
  forwarded: number
  /** Payloads that failed for good. */
  failed: number
  /** Payloads waiting for a retry after a failed attempt. */
  retrying: number
  /** Payloads not settled yet (queued, in flight or waiting to retry). */
  pending: number
  /** Failed attempts that were retried. */
  retries: number
  /** Messages not forwarded because their messageId was accepted within the last 24 hours. */
  deduplicated: number
}

/** What {@link Collector.close} resolves with: whether deliveries settled in time, and the counters then. */
export interface DrainReport {
  /** Whether every delivery settled within the bound. */
  drained: boolean
  /**
   * Memory: deliveries still unsettled when the bound was reached, which then failed (exactly
   * the rise in `stats.failed`). With a queue server: 0 (what is left stays in the server).
   */
  pending: number
  /**
   * With a queue server, when not drained: the attempts still in flight at the bound, which were
   * stopped (their deliveries stay in the server, as the rest do). Otherwise 0.
   */
  stopped: number
  /** With a queue server: `false` when it was never reached (nothing was taken from it, nothing is pending here). */
  queueReached?: boolean
  /** The counters once closed. */
  stats: CollectorStats
}

/**
 * The ingest service {@link createCollector} makes: a fetch-style handler for the HTTP API, plus
 * deletion requests, audience syncs, counters and a bounded drain.
 */
export interface Collector {
  /** The HTTP API: `POST /v1/batch`, the single calls, and the admin endpoints. */
  fetch(request: Request): Promise<Response>
  /** One `delete` payload per affected source with an enabled destination. */
  requestDeletion(request: DeletionRequest): Dispatch
  /** Identify payloads for the membership changes since this audience's previous sync. */
  syncAudience(request: AudienceSyncRequest): Promise<Dispatch>
  /** The counters now. */
  stats(): CollectorStats
  /**
   * Stops accepting (requests are answered 503), waits up to `timeoutMs` (default: the
   * `drainTimeout` option) for deliveries to settle, then cancels what is left. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<DrainReport>
  /** Whether `close()` has been called. */
  readonly closed: boolean
}

/** Internal hooks for the testing kit: accept any write key, observe accepted batches. */
export interface CollectorHooks {
  anyWriteKey?: boolean
  onAccepted?: (batch: AcceptedBatch) => void
}

/**
 * Makes the collector: the ingest service clients send to, as a fetch-style handler
 * (`collector.fetch`) that runs unchanged on Node, Bun, Deno and workers. Accepted messages are
 * forwarded to each source's webhook URLs, from memory or, with option `queue`, through a Redis or
 * PostgreSQL queue server.
 *
 * @throws `ConfigError` naming the option for any invalid or unknown configuration.
 *
 * @example
 * ```ts
 * import { createCollector, startServer } from 'isomorphic-analytics/collector'
 *
 * const collector = createCollector({
 *   sources: [{
 *     writeKey: 'KEY',
 *     name: 'web',
 *     webhooks: { urls: [{ url: 'https://example.com/hook' }], sharedSecret: process.env.WEBHOOK_SECRET },
 *   }],
 *   adminToken: process.env.ADMIN_TOKEN, // optional: enables the console and admin endpoints
 * })
 * const server = await startServer(collector, { port: 8700 }) // Bun.serve({ fetch: collector.fetch }), …
 * // At shutdown: stop listening, then drain deliveries (bounded).
 * await server.close()
 * await collector.close()
 * ```
 */
export function createCollector(config: CollectorConfig): Collector {
  return buildCollector(resolveConfig(config), {})
}

export function buildCollector(config: ResolvedConfig, hooks: CollectorHooks): Collector {
  const log: Logger = createLogger('analytics:collector', config.debug ?? debugEnables(readDebugSetting(), 'analytics:collector'))
  const sources = config.sources.map((source, i) => createSourceRuntime(source, i, config))
  // This collector's queue server; PostgreSQL: with the sockets its `close` may have to drop.
  const server = config.queue && { ...config.queue, ...(config.queue.kind === 'postgres' && { sockets: new PgSockets() }) }
  // Failures of the connections `close` dropped are the collector's own doing: logged, not reported.
  // So is what fails once `close()` resolved: a Redis bus dropped at close rejects its waiting
  // commands a moment later (the settings load failed, reported to a caller done with us).
  let closeResolved = false
  const onQueueError = (error: unknown) => {
    if (server?.sockets?.dropped) log(`a connection dropped by close: ${String(error)}`)
    else if (closeResolved) log(`after close: ${String(error)}`)
    else config.onError(error)
  }
  // With a queue server, counters live there too (shared by every process on it).
  const shared = server ? new SharedState(server) : undefined
  const tally = new Tally(
    sources.map((s) => s.name),
    shared && ((key, delta) => shared.add(key, delta)),
  )
  const byKey = new Map<string, SourceRuntime>(sources.map((s) => [s.writeKey, s]))
  const byName = new Map<string, SourceRuntime>(sources.map((s) => [s.name, s]))
  const destinations = new Map<string, WebhookDestination>(
    sources.flatMap((s) => (s.destination ? [[s.name, s.destination] as const] : [])),
  )
  // With a queue server, its bus tells every process of settings changes and console records.
  const bus = server ? new QueueBus(server, onQueueError) : undefined
  const recorder = config.adminToken === undefined ? undefined : new ConsoleRecorder()
  const sharedConsole = recorder && bus ? shareConsole(recorder, bus) : undefined
  const queueOptions = {
    destinations,
    concurrency: config.deliveryConcurrency,
    maxPending: config.maxPendingDeliveries,
    tally,
    log,
  }
  // Settings saved in a shared store are loaded below, after the queue exists: its worker waits.
  let settingsLoaded = () => {}
  const startAfter = new Promise<void>((resolve) => (settingsLoaded = resolve))
  // The one place the delivery queue is chosen: a queue server when configured, else memory.
  const queue: DeliveryQueue = server
    ? new BullmqQueue({
      ...queueOptions,
      server,
      onError: onQueueError,
      counters: shared!,
      startAfter,
      ...(sharedConsole && { traces: sharedConsole.traces }),
    })
    : new MemoryQueue(queueOptions)
  // The console's record, where ingest and the admin requests record what they queue.
  const recording = sharedConsole
    ? { record: sharedConsole.record, traceId: sharedConsole.traceId }
    : recorder && { record: recorder.accepted.bind(recorder) }
  const admin: AdminState = {
    byName,
    queue,
    memberships: shared ? new SharedMemberships(shared) : new MemoryMemberships(),
    turns: new Map(),
    rooms: new RoomWaits(),
    maxPending: config.maxPendingDeliveries,
    log,
    ...(recording && { console: recording }),
  }
  let closing: Promise<DrainReport> | undefined

  const open = (call: string) => {
    if (closing !== undefined) throw new ClientClosedError(call)
  }
  const deletion = (request: DeletionRequest) => (open('requestDeletion'), requestDeletion(admin, request))
  const audience = async (request: AudienceSyncRequest) => (open('syncAudience'), syncAudience(admin, request))

  const stats = (): CollectorStats => {
    const { requests, rejected, metrics, lastReceivedAt, totals } = tally.snapshot()
    return { requests, rejected, metrics, lastReceivedAt, ...totals, ...queue.counts() }
  }

  // Console settings: the config's own store, else the queue server's (shared), else memory.
  const store = config.settings ?? (bus ? queueSettings(bus, onQueueError) : memorySettings)
  const settings = createSourceSettings({ config, store, sources, queue, report: onQueueError })
  void settings.ready.then(settingsLoaded)
  // One limit on wrong admin tokens for every admin endpoint, the console's included.
  const guard = config.adminToken === undefined ? undefined : new AdminGuard({ token: config.adminToken, trustProxy: config.trustProxy, log })
  const consoleContext = recorder && createConsole({ guard: guard!, retries: retriesByHand(tally, shared), settings, sources, queue, recorder, memberships: admin.memberships, ...(sharedConsole && { shared: sharedConsole }) })
  async function report(request: Request): Promise<StatsReport> {
    const names = sources.map((s) => s.name)
    if (queue.sharedCounts) {
      const counts = await queue.sharedCounts(requestDeadline(request))
      return statsReport('shared', Object.fromEntries(names.map((name) => [name, sharedSourceStats(counts, name)])))
    }
    const snapshot = tally.snapshot()
    return statsReport('process', Object.fromEntries(names.map((name) => [name, sourceStats(snapshot.sources[name], queue.counts(name))])))
  }

  const ingest = createIngest({
    lookup: (key) => byKey.get(key) ?? (hooks.anyWriteKey ? sources[0] : undefined),
    queue,
    tally,
    dedup: config.queue ? undefined : new RecentMessageIds(DEDUP_TTL_MS, MAX_DEDUP_ENTRIES),
    log,
    ...(hooks.onAccepted && { onAccepted: hooks.onAccepted }),
    ...recording,
  })
  const core = createHandler({
    ingest,
    admin: guard === undefined ? undefined : { guard, durable: queue.durable, deletion, audience, stats: report },
    isClosed: () => closing !== undefined,
    isStarting: () => !ready,
    tally,
    log,
    onError: config.onError,
    console: consoleContext,
  })
  // Requests wait (once, at start) for the settings saved in a shared store, so a message is
  // routed with them and the console shows them, and for the bus, so this process hears the others.
  // With a queue server, that wait and the write share one deadline, 5 s from the request's arrival:
  // past it, ingest and the admin endpoints are answered 503 QUEUE_UNAVAILABLE (`isStarting`).
  let ready = false
  const started = Promise.all([settings.ready, bus?.ready().catch(() => {}), loadExactJson()]).then(() => void (ready = true))
  const answer: CollectorCore = (head, full) => (ready ? core(head, full) : whenStarted(head, full))
  async function whenStarted(head: RequestHead, full: () => Request): Promise<Response | JsonAnswer> {
    if (!server) return started.then(() => core(head, full))
    const by = writeDeadline()
    await settlesWithin(started, QUEUE_WRITE_WAIT_MS)
    return core(setRequestDeadline(head, by), () => setRequestDeadline(full(), by))
  }
  // The Node server calls `answer` directly (no web objects on the ingest path; see http/direct.ts).
  const fetch = withCore(async (request: Request) => {
    checkRequest(request)
    const made = await answer(request, () => request)
    return made instanceof JsonAnswer ? made.toResponse() : made
  }, answer)
  // A server listens once requests would not wait, queue server connected included (startServer).
  if (guard !== undefined) markAdmin(fetch)
  markReadiness(fetch, Promise.all([started, queue.ready?.()]).then(() => {}, () => {}))

  async function drain(timeoutMs: number): Promise<DrainReport> {
    settings.close()
    consoleContext?.streams.close()
    log(`closing: ${count(stats().pending, 'delivery', 'deliveries')} pending, waiting up to ${timeoutMs} ms`)
    // Everything is done within the drain timeout plus TEARDOWN_MS, whatever the queue server does.
    const deadline = Date.now() + timeoutMs + TEARDOWN_MS
    // Admin payloads waiting for room: queued before the drain (memory: it attempts and counts
    // them), or given up on (a queue server: their requests are answered 503, not 200).
    if (queue.durable) void admin.rooms.stop()
    else await admin.rooms.stop()
    const { drained, pending, stopped, reached } = await queue.close(timeoutMs)
    sharedConsole?.close()
    // A bus that did not say goodbye in time waits on a server that does not answer: dropped.
    if (bus && !(await settlesWithin(bus.close(), Math.max(0, deadline - Date.now())))) server?.sockets?.drop()
    if (queue.durable) log(`closed: ${durableClosed(drained, stopped ?? 0, timeoutMs, reached)}`)
    else log(drained ? 'closed: every delivery settled' : `closed: ${count(pending, 'delivery', 'deliveries')} still pending cancelled`)
    return { drained, pending, stopped: stopped ?? 0, ...(queue.durable && { queueReached: reached ?? true }), stats: stats() }
  }

  return {
    fetch,
    requestDeletion: deletion,
    syncAudience: audience,
    stats,
    close(timeoutMs = config.drainTimeout) {
      closing ??= drain(Math.max(0, timeoutMs)).finally(() => (closeResolved = true))
      return closing
    },
    get closed() {
      return closing !== undefined
    },
  }
}

/**
 * What a durable drain did. Not drained: the worker had not stopped at the bound, with attempts
 * in flight (stopped then) or without (a queue server gone or not answering, a job waiting on it).
 */
export function durableClosed(drained: boolean, stopped: number, timeoutMs: number, reached = true): string {
  if (!reached) return `the queue server was not reached within ${timeoutMs} ms; nothing was taken from it`
  if (drained) return 'attempts in flight finished; the rest stays in the queue server'
  if (stopped === 0) return `no attempt was in flight, but the queue worker had not stopped after ${timeoutMs} ms; the queued deliveries stay in the queue server`
  const one = stopped === 1
  return `${count(stopped, 'attempt')} still in flight after ${timeoutMs} ms ${one ? 'was' : 'were'} stopped; ${one ? 'it stays' : 'they stay'} in the queue server with the queued deliveries`
}
