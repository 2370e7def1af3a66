/**
 * The admin endpoints (only with an admin token, sent as `Authorization: Bearer <token>`):
 * `POST /v1/deletions` and `POST /v1/audiences`, the collector's `requestDeletion` and
 * `syncAudience` over HTTP, and `GET /v1/stats`.
 */
import type { AdminGuard } from './guard.js'
import { QueueUnavailableError } from '../delivery/queue.js'
import { fromMessageError, jsonResponse, retryLater } from '../http/errors.js'
import { readBodyText } from '../http/read-body.js'
import { parseJson } from '../ingest/parse.js'
import { settlesWithin, valueWithin } from '../settles-within.js'
import type { StatsReport } from './stats.js'
import { NoRoomError, type Dispatch } from './dispatch.js'
import { AudienceBusyError } from '../state/memberships.js'
import type { AudienceSyncRequest, DeletionRequest } from './requests.js'

export type AdminRoute = 'deletions' | 'audiences' | 'stats'

export interface AdminContext {
  /** The admin token's check, with its limit on wrong tokens (shared with the console's endpoints). */
  guard: AdminGuard
  /** Deliveries live in a queue server: nothing is answered 200 before it is there. */
  durable: boolean
  deletion(request: DeletionRequest): Dispatch
  audience(request: AudienceSyncRequest): Promise<Dispatch>
  /** `request`: for its deadline, when it has one (see http/deadline.ts). */
  stats(request: Request): Promise<StatsReport>
}

/** How long an admin request waits for its payloads to be queued before answering anyway. */
const QUEUED_WAIT_MS = 5_000

/**
 * `POST /v1/deletions` and `POST /v1/audiences` answer once the payloads are queued. In memory,
 * also after 5 s with `"queuing": true` while a large audience still waits for room under the
 * backlog limit (it keeps going in the background); an audience sync still waiting then for an
 * earlier sync of that audience to be queued (its turn) is answered without `sent`, not yet
 * known. With a queue server, only once every payload is there: what found no room in time is
 * answered 503 `BACKLOG_FULL` (Retry-After), the queue server away 503 `QUEUE_UNAVAILABLE`, a
 * sync of the audience on another process still under way after 10 s 503 `AUDIENCE_BUSY`.
 * `GET /v1/stats`.
 */
export async function handleAdmin(route: AdminRoute, request: Request, context: AdminContext): Promise<Response> {
  await context.guard.check(request)
  if (route === 'stats') {
    try {
      return jsonResponse(200, await context.stats(request))
    } catch (error) {
      // The queue server away: answered as ingest is, so a monitor polling it is neither held nor told "500".
      if (!(error instanceof QueueUnavailableError)) throw error
      throw retryLater('QUEUE_UNAVAILABLE', `${error.message} Retry later.`)
    }
  }
  const body = parseJson(await readBodyText(request)).value
  try {
    const deadline = Date.now() + QUEUED_WAIT_MS
    const dispatching =
      route === 'deletions'
        ? Promise.resolve(context.deletion(body as DeletionRequest))
        : context.audience(body as AudienceSyncRequest)
    if (context.durable) {
      // Held in this process after the answer, a payload would be lost with it (SIGTERM, a crash).
      // Bounded: each sync before it in its turn, and this one, wait for room 5 s at most.
      const dispatch = await dispatching
      await dispatch.queued
      return jsonResponse(200, { success: true, sources: dispatch.sources, sent: dispatch.payloads.length })
    }
    const made = await valueWithin(dispatching, QUEUED_WAIT_MS)
    if (made === undefined) {
      // Its turn comes later, in the background (a failure then is in the collector's log).
      dispatching.catch(() => {})
      return jsonResponse(200, { success: true, sources: [(body as AudienceSyncRequest).source], queuing: true })
    }
    const dispatch = made.value
    const queued = await settlesWithin(dispatch.queued, Math.max(0, deadline - Date.now()))
    return jsonResponse(200, {
      success: true,
      sources: dispatch.sources,
      sent: dispatch.payloads.length,
      ...(!queued && { queuing: true }),
    })
  } catch (error) {
    if (error instanceof NoRoomError) throw retryLater(error.closing ? 'CLOSED' : 'BACKLOG_FULL', `${error.message} Retry later.`)
    if (error instanceof QueueUnavailableError) throw retryLater('QUEUE_UNAVAILABLE', `${error.message} Retry later.`)
    if (error instanceof AudienceBusyError) throw retryLater('AUDIENCE_BUSY', `${error.message} Retry later.`)
    throw fromMessageError(error, '') ?? error
  }
}
