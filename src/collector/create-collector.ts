/**
 * `createCollector(config)`: the ingest service as a fetch-style handler, plus deletion requests,
 * audience syncs, counters and a bounded drain. Web-standard globals only: it runs unchanged on
 * Node, Bun, Deno and workers.
 */
import { ClientClosedError } from '../errors.js'
import { createLogger, debugEnables, type Logger } from '../logger.js'
import { readDebugSetting } from '../platform/runtime.js'
import {
  requestDeletion,
  syncAudience,
  type AudienceSyncRequest,
  type DeletionRequest,
  type Dispatch,
} from './admin.js'
import { resolveConfig, type CollectorConfig, type ResolvedConfig } from './config.js'
import type { DeliveryCounters } from './delivery-queue.js'
import { createHandler, type AcceptedBatch } from './handler.js'
import { createSourceRuntime, type SourceRuntime } from './source.js'

export interface CollectorStats {
  /** HTTP requests handled. */
  requests: number
  /** Requests answered with an error status. */
  rejected: number
  /** Messages accepted. */
  received: number
  /** Accepted messages not forwarded: no enabled destination, or turned off by `integrations`. */
  skipped: number
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
}

export interface DrainReport {
  /** Whether every delivery settled within the bound. */
  drained: boolean
  /** Deliveries still unsettled when the bound was reached (their retries are then cancelled). */
  pending: number
  stats: CollectorStats
}

export interface Collector {
  /** The HTTP API: `POST /v1/batch`, the single calls, and the admin endpoints. */
  fetch(request: Request): Promise<Response>
  /** One `delete` payload per affected source with an enabled destination. */
  requestDeletion(request: DeletionRequest): Dispatch
  /** Identify payloads for the membership changes since this audience's previous sync. */
  syncAudience(request: AudienceSyncRequest): Dispatch
  stats(): CollectorStats
  /**
   * Stops accepting (requests are answered 503), waits up to `timeoutMs` (default: the
   * `drainTimeout` option) for deliveries to settle, then cancels what is left. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<DrainReport>
  readonly closed: boolean
}

/** Internal hooks for the testing kit: accept any write key, observe accepted batches. */
export interface CollectorHooks {
  anyWriteKey?: boolean
  onAccepted?: (batch: AcceptedBatch) => void
}

export function createCollector(config: CollectorConfig): Collector {
  return buildCollector(resolveConfig(config), {})
}

export function buildCollector(config: ResolvedConfig, hooks: CollectorHooks): Collector {
  const log: Logger = createLogger(config.debug ?? debugEnables(readDebugSetting(), 'analytics'))
  const deliveries: DeliveryCounters = { forwarded: 0, failed: 0, retries: 0 }
  const counters = { requests: 0, rejected: 0, received: 0, skipped: 0 }
  const sources = config.sources.map((source, i) => createSourceRuntime(source, i, config, deliveries, log))
  const byKey = new Map<string, SourceRuntime>(sources.map((s) => [s.writeKey, s]))
  const byName = new Map<string, SourceRuntime>(sources.map((s) => [s.name, s]))
  const memberships = new Map<string, readonly string[]>()
  const queues = sources.flatMap((s) => (s.queue ? [s.queue] : []))
  let closing: Promise<DrainReport> | undefined

  const open = (call: string) => {
    if (closing !== undefined) throw new ClientClosedError(call)
  }
  const deletion = (request: DeletionRequest) => (open('requestDeletion'), requestDeletion(byName, request))
  const audience = (request: AudienceSyncRequest) => (open('syncAudience'), syncAudience(byName, memberships, request))

  const stats = (): CollectorStats => ({
    ...counters,
    ...deliveries,
    retrying: queues.reduce((n, q) => n + q.retrying, 0),
    pending: queues.reduce((n, q) => n + q.pending, 0),
  })

  const fetch = createHandler({
    lookup: (key) => byKey.get(key) ?? (hooks.anyWriteKey ? sources[0] : undefined),
    admin: config.adminToken === undefined ? undefined : { adminToken: config.adminToken, deletion, audience },
    isClosed: () => closing !== undefined,
    counters,
    log,
    onError: config.onError,
    ...(hooks.onAccepted && { onAccepted: hooks.onAccepted }),
  })

  async function drain(timeoutMs: number): Promise<DrainReport> {
    log(`closing: ${stats().pending} deliveries pending, waiting up to ${timeoutMs} ms`)
    let timer: ReturnType<typeof setTimeout> | undefined
    // A plain (ref'd) timer: the drain is bounded, and the process must live until it reports.
    const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))
    const idle = Promise.all(queues.map((q) => q.whenIdle())).then(() => true as const)
    const drained = await Promise.race([idle, bound])
    clearTimeout(timer)
    const pending = stats().pending
    await Promise.all(queues.map((q) => q.close()))
    log(drained ? 'closed: every delivery settled' : `closed: ${pending} deliveries still pending were cancelled`)
    return { drained, pending, stats: stats() }
  }

  return {
    fetch,
    requestDeletion: deletion,
    syncAudience: audience,
    stats,
    close(timeoutMs = config.drainTimeout) {
      closing ??= drain(Math.max(0, timeoutMs))
      return closing
    },
    get closed() {
      return closing !== undefined
    },
  }
}
