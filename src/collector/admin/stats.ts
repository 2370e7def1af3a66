/**
 * `GET /v1/stats` (admin token): what the collector accepted and what became of it, overall and
 * per source. With a queue server the figures are those of every process sharing it.
 */
import type { BacklogCounts } from '../delivery/queue.js'
import type { SourceCounts } from '../stats.js'

export interface SourceStats {
  /**
   * Messages accepted (answered 200; with a queue server, also those of a request answered 503
   * whose write reached the server afterwards: they are delivered all the same).
   */
  accepted: number
  /** Accepted messages not forwarded: no enabled destination, or turned off by `integrations`. */
  skipped: number
  /** Accepted messages not forwarded because of the source's tracking plan. */
  blocked: number
  /** Messages not forwarded because their messageId was accepted within the last 24 hours. */
  deduplicated: number
  forwarded: number
  failed: number
  /** Failed attempts that were retried. */
  retries: number
  retrying: number
  pending: number
}

export interface StatsReport extends SourceStats {
  /** `process`: this process's figures (memory mode); `shared`: every process on the queue server. */
  scope: 'process' | 'shared'
  sources: Record<string, SourceStats>
}

const FIELDS = ['accepted', 'skipped', 'blocked', 'deduplicated', 'forwarded', 'failed', 'retries', 'retrying', 'pending'] as const

export function sourceStats(counts: SourceCounts, backlog: BacklogCounts): SourceStats {
  const { received, skipped, blocked, deduplicated, forwarded, failed, retries } = counts
  return { accepted: received, skipped, blocked, deduplicated, forwarded, failed, retries, ...backlog }
}

/** From shared counters (`${source}|${name}` → value, as `Tally` and the durable queue write them). */
export function sharedSourceStats(shared: Record<string, number>, source: string): SourceStats {
  const get = (name: string) => Math.max(0, shared[`${source}|${name}`] ?? 0)
  return {
    accepted: get('received'), skipped: get('skipped'), blocked: get('blocked'), deduplicated: get('deduplicated'), forwarded: get('forwarded'),
    failed: get('failed'), retries: get('retries'), retrying: get('retrying'), pending: get('pending'),
  }
}

export function statsReport(scope: StatsReport['scope'], sources: Record<string, SourceStats>): StatsReport {
  const totals = Object.fromEntries(FIELDS.map((f) => [f, 0])) as unknown as SourceStats
  for (const stats of Object.values(sources)) for (const f of FIELDS) totals[f] += stats[f]
  return { scope, ...totals, sources }
}
