/**
 * De-duplication of a `batch` job's payloads by messageId (see `bullmq-jobs.ts`): the job claims
 * its messages' ids in the queue server (`SharedState.claim`) and learns which payloads to attempt
 * and which are duplicates. Apart from the runner so that the rule reads on its own: a payload is
 * attempted when it has no messageId, or when this job holds its id and it is the id's first
 * occurrence in the request.
 */
import { DEDUP_TTL_MS } from '../ingest/dedup.js'
import type { SharedState } from '../state/shared-state.js'
import type { BatchData } from './bullmq-job-data.js'

/**
 * Of the payloads `todo` (indexes into `items`, a `batch` job's deliveries), those to attempt and
 * the duplicates, once the job (`owner`) has claimed their ids for `source`.
 */
export async function claimIds(
  counters: SharedState,
  source: string,
  owner: string,
  items: BatchData['d'],
  todo: readonly number[],
): Promise<{ attempt: number[]; duplicates: number[] }> {
  // De-duplication: this job claims its ids (a re-run finds them still its own).
  const ids = todo.flatMap((i) => (items[i][2] === null ? [] : [items[i][2]]))
  const held = await counters.claim(source, ids, owner, DEDUP_TTL_MS)
  // A messageId twice in one request: its first occurrence is the one delivered.
  const firstIndex = new Map<string, number>()
  items.forEach(([, , id], i) => id !== null && !firstIndex.has(id) && firstIndex.set(id, i))
  const duplicates: number[] = []
  const attempt: number[] = []
  for (const i of todo) {
    const id = items[i][2]
    if (id === null || (held.has(id) && firstIndex.get(id) === i)) attempt.push(i)
    else duplicates.push(i)
  }
  return { attempt, duplicates }
}
