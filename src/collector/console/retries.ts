/**
 * What a retry by hand (the console's `POST /v1/admin/messages/{id}/retry`) changes beyond the
 * record: the counts, and, with a queue server, who may make it.
 *
 * - `unfailed`: the message leaves `failed` (it is pending again, then forwarded or failed like
 *   any delivery). With a queue server only the shared count moves: a process's own counts are
 *   what it did, and the process whose attempt failed may not be the one asked to retry.
 * - `claim` (queue server only): two admins, or two tabs on two collector processes, retrying
 *   the same failed delivery at once would each see it failed in their own record and send it
 *   twice; so the retry of a delivery after its attempt `n` is claimed in the queue server, by
 *   one request of any process (for 24 hours, as messageIds are).
 */
import { randomUUID } from '#platform'
import { DEDUP_TTL_MS } from '../ingest/dedup.js'
import type { SharedState } from '../state/shared-state.js'
import type { DeliveryTally } from '../stats.js'

export interface RetriesByHand {
  unfailed(source: string): void
  /** Whether this request may retry the delivery `traceId` after its attempt `attempt`. */
  claim?(traceId: string, attempt: number): Promise<boolean>
}

/** Beside the sources' messageIds, under a control character no source name uses in practice. */
const CLAIMS = '\u001dretry'

export function retriesByHand(tally: Pick<DeliveryTally, 'failed'>, shared: SharedState | undefined): RetriesByHand {
  if (shared === undefined) return { unfailed: (source) => tally.failed(source, -1) }
  return {
    unfailed: (source) => shared.add(`${source}|failed`, -1),
    claim: async (traceId, attempt) => (await shared.claim(CLAIMS, [`${traceId}\u001d${attempt}`], randomUUID(), DEDUP_TTL_MS)).size === 1,
  }
}
