/**
 * `createCollector(config)`: the ingest service as a fetch-style handler, plus deletion requests,
 * audience syncs, counters and a bounded drain. Web-standard globals only: it runs unchanged on
 * Node, Bun, Deno and workers.
 */
import { ClientClosedError } from '../errors.js'
import { count, createLogger, debugEnables, type Logger } from '../logger.js'
import { readDebugSetting } from '#platform'
import type { WebhookDestination } from '../webhooks/index.js'
import {
  requestDeletion,
  syncAudience,
  type AdminState,
  type AudienceSyncRequest,
  type DeletionRequest,
} from './admin/requests.js'
import { RoomWaits } from './admin/room-waits.js'
import { AdminGuard } from './admin/guard.js'
import { resolveConfig, type CollectorConfig, type ResolvedConfig } from './config.js'
import { sharedSourceStats, sourceStats, statsReport, type StatsReport } from './admin/stats.js'
import { MemoryQueue } from './delivery/memory-queue.js'
import { QUEUE_WRITE_WAIT_MS, writeDeadline, type DeliveryQueue } from './delivery/queue.js'
import { ConsoleRecorder, createConsole, createSourceSettings, memorySettings } from './console/index.js'
import { retriesByHand } from './console/retries.js'
import { DEDUP_TTL_MS, RecentMessageIds } from './ingest/dedup.js'
import { checkRequest, createHandler } from './http/handler.js'
import { withCore, type CollectorCore, type RequestHead } from './http/direct.js'
import { JsonAnswer } from './http/errors.js'
import { markReadiness } from './http/readiness.js'
import { markAdmin } from './http/exposure.js'
import { requestDeadline, setRequestDeadline } from './http/deadline.js'
import { createIngest } from './ingest/accept.js'
import { loadExactJson } from '../message/exact-json.js'
import { createSourceRuntime, type SourceRuntime } from './sources.js'
import { MemoryMemberships } from './state/memberships.js'
import { MemoryKept } from './replay/kept.js'
import { checkReplay, replay } from './replay/replay.js'
import { Tally } from './stats.js'
import { settlesWithin } from './settles-within.js'
import { collectorStats, type Collector, type CollectorHooks, type CollectorStats, type DrainReport } from './collector-api.js'
import type { DurableMode } from './durable.js'
import { startDurable, type Assembled } from './durable-start.js'
import { EndpointHealth } from './health/endpoint-health.js'
import type { UrlGate } from '../webhooks/destination.js'

export type { Collector, CollectorHooks, CollectorStats, DrainReport } from './collector-api.js'

/** With a queue server, how long a process gathers its URLs' outcomes before merging them there. */
const HEALTH_FLUSH_MS = 1_000
/** (source, messageId) pairs remembered in memory for de-duplication, at most. */
const MAX_DEDUP_ENTRIES = 500_000
/**
 * How long `close()` may take past its drain timeout: less than the second within which a process
 * ends (README), which holds its exit too. With all of it, a process ended just past it.
 */
const TEARDOWN_MS = 800

/**
 * Makes the collector: the ingest service clients send to, as a fetch-style handler
 * (`collector.fetch`) that runs unchanged on Node, Bun, Deno and workers. Accepted messages are
 * forwarded to each source's webhook URLs, from memory or, with option `queue`, through a Redis or
 * PostgreSQL queue server. The code for a queue server is loaded only with `queue` (a bundle keeps
 * it in a chunk of its own): such a collector starts once it is, a moment after this returns, and
 * calls made before then wait for it.
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

/**
 * `createCollector` with the testing kit's hooks. With a `queue`, durable mode is loaded first
 * (the one `import()` of ./durable.js), and the collector made then answers through the one returned.
 */
export function buildCollector(config: ResolvedConfig, hooks: CollectorHooks): Collector {
  const log: Logger = createLogger('analytics:collector', config.debug ?? debugEnables(readDebugSetting(), 'analytics:collector'))
  // Each URL's health, asked and told by its destination (shared through the queue server once there).
  const health = new EndpointHealth({ disableAfter: config.disableAfter, now: hooks.now ?? Date.now, report: config.onError, log })
  const gates = (source: string) => health.gate(source)
  const sources = config.sources.map((source, i) => createSourceRuntime(source, i, config, false, gates))
  const parts = { log, health, gates }
  if (config.queue === undefined) return assemble(config, hooks, sources, parts).collector
  return startDurable(config, sources, async () => assemble(config, hooks, sources, parts, (await import('./durable.js')).DurableMode))
}

/** The collector of `sources`, from memory or, given `Durable`, through the queue server. */
function assemble(config: ResolvedConfig, hooks: CollectorHooks, sources: SourceRuntime[], parts: { log: Logger; health: EndpointHealth; gates: (source: string) => UrlGate }, Durable?: typeof DurableMode): Assembled {
  const { log, health } = parts
  // What fails once `close()` resolved is logged, not reported: a Redis bus dropped at close
  // rejects its waiting commands a moment later (the settings load failed, reported to a caller
  // done with us). Durable mode logs the failures of the connections `close` dropped too.
  let closeResolved = false
  const onQueueError = (error: unknown) => (closeResolved ? log(`after close: ${String(error)}`) : config.onError(error))
  // This collector's parts in the queue server, when it has one.
  const durable = config.queue && Durable && new Durable(config.queue, onQueueError, log)
  if (durable) health.share(durable.health(), HEALTH_FLUSH_MS, onQueueError)
  // With a queue server, counters live there too (shared by every process on it).
  const shared = durable?.shared
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
  const recorder = config.adminToken === undefined ? undefined : new ConsoleRecorder()
  const sharedConsole = recorder && durable?.shareConsole(recorder)
  // Settled payloads kept for replay (only with an admin token: replay is an admin endpoint; none
  // with a retention of 0: no work, no queue server command, per delivery).
  const keeping = recorder !== undefined && config.retention > 0
  const inMemory = keeping && !durable ? new MemoryKept(config.retention) : undefined
  const kept = inMemory ?? (keeping && durable ? durable.kept(config.retention) : undefined)
  const queueOptions = {
    ...(inMemory && { kept: inMemory }),
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
  const queue: DeliveryQueue = durable ? durable.deliveryQueue({ ...queueOptions, startAfter }) : new MemoryQueue(queueOptions)
  // The console's record, where ingest and the admin requests record what they queue.
  const recording = sharedConsole
    ? { record: sharedConsole.record, traceId: sharedConsole.traceId }
    : recorder && { record: recorder.accepted.bind(recorder) }
  const admin: AdminState = {
    byName,
    queue,
    memberships: durable?.memberships() ?? new MemoryMemberships(),
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

  const stats = (): CollectorStats => collectorStats(tally, queue.counts())

  // Console settings: the config's own store, else the queue server's (shared), else memory.
  const store = config.settings ?? durable?.settings() ?? memorySettings
  const settings = createSourceSettings({ config, store, sources, queue, report: durable?.report ?? onQueueError, gates: parts.gates })
  void settings.ready.then(settingsLoaded)
  // One limit on wrong admin tokens for every admin endpoint, the console's included.
  const guard = config.adminToken === undefined ? undefined : new AdminGuard({ token: config.adminToken, trustProxy: config.trustProxy, log })
  const consoleContext = recorder && createConsole({ guard: guard!, retries: retriesByHand(tally, shared), health, settings, sources, queue, recorder, memberships: admin.memberships, replay: (body) => replay(admin, kept, checkReplay(byName, body)), ...(sharedConsole && { shared: sharedConsole }) })
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
  const started = Promise.all([settings.ready, durable?.ready(), loadExactJson(), health.load()]).then(() => void (ready = true))
  const answer: CollectorCore = (head, full) => (ready ? core(head, full) : whenStarted(head, full))
  async function whenStarted(head: RequestHead, full: () => Request): Promise<Response | JsonAnswer> {
    if (!durable) return started.then(() => core(head, full))
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
    await settlesWithin(health.close(), Math.max(0, deadline - Date.now()))
    await durable?.close(deadline)
    if (queue.durable) log(`closed: ${durableClosed(drained, stopped ?? 0, timeoutMs, reached)}`)
    else log(drained ? 'closed: every delivery settled' : `closed: ${count(pending, 'delivery', 'deliveries')} still pending cancelled`)
    return { drained, pending, stopped: stopped ?? 0, ...(queue.durable && { queueReached: reached ?? true }), stats: stats() }
  }

  const collector: Collector = {
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
  return { collector, admin }
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
