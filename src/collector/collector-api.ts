/**
 * What the collector is to its users (`Collector`, its counters and its drain report) and the
 * testing kit's hooks, apart from how it is made (create-collector.ts), so that the memory and the
 * durable makings (durable-start.ts) share them.
 */
import type { AudienceSyncRequest, DeletionRequest, Dispatch } from './admin/requests.js'
import type { BacklogCounts } from './delivery/queue.js'
import type { AcceptedBatch } from './ingest/accept.js'
import type { Tally } from './stats.js'

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
  /** The endpoint health's clock (tests; default `Date.now`). */
  now?: () => number
}

/** What `Collector.stats()` returns: `tally`'s counters and the delivery queue's `backlog`. */
export function collectorStats(tally: Tally, backlog: BacklogCounts): CollectorStats {
  const { requests, rejected, metrics, lastReceivedAt, totals } = tally.snapshot()
  return { requests, rejected, metrics, lastReceivedAt, ...totals, ...backlog }
}
