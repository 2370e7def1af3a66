/**
 * Sending an admin request's payloads (a deletion's, an audience sync's; ./requests.ts makes
 * them): queued through the same delivery queue as ingest, in chunks that fit under each source's
 * backlog limit with waits for room between them, and recorded in the console's record as ingest
 * records messages (their attempts and outcome; an audience sync's first `RECORDED_PER_SYNC` per
 * source). Gives back a `Dispatch`: when the payloads are queued, and how their deliveries ended.
 */
// The value apart from the types: a first import the declarations keep would carry this header into them.
import { deferredTrace } from '../console/recorder.js'
import type { AcceptOptions, DeferredTrace, Forward } from '../console/recorder.js'
import type { WebhookPayload } from '../../webhooks/index.js'
import type { DeliveryQueue, DeliveryTrace, QueuedDelivery } from '../delivery/queue.js'
import type { SourceRuntime } from '../sources.js'
import { count, type Logger } from '../../logger.js'
import type { RoomWaits } from './room-waits.js'

/**
 * With the console: its record, where each payload is recorded once queued (as ingest records
 * messages), and in durable mode `traceId`, which names a payload's delivery so that any process
 * attempting it reports there (`always`: even past the console's per-second budget).
 */
export interface AdminRecord {
  record(source: string, payload: Record<string, unknown>, forward: Forward, admin: Pick<AcceptOptions, 'origin' | 'name' | 'replay'>): DeliveryTrace
  traceId?: (always?: boolean) => string | undefined
}

/** What sending needs: the queue and its backlog limit, the waits for room, the log, the console's record. */
export interface SendState {
  queue: DeliveryQueue
  /** The per-source backlog limit (`maxPendingDeliveries`). */
  maxPending: number
  log: Logger
  console?: AdminRecord
  /** The sends waiting for room; `close()` stops their waits before the queue's drain. */
  rooms: RoomWaits
}

/** What a deletion or sync sent, and a promise of how its deliveries ended. */
export interface Dispatch {
  /** Names of the sources that got payloads. */
  sources: string[]
  /** The payloads sent, to each of those sources' receivers. */
  payloads: WebhookPayload[]
  /**
   * Resolves once every payload is queued (offered in chunks that fit under the backlog limit);
   * rejects when the queue refused them (the collector closed, the queue server failed) or, with
   * a queue server, when some found no room in time (`NoRoomError`): the others are queued.
   */
  queued: Promise<void>
  /**
   * Resolves once every payload has been delivered or has failed for good; with a queue server,
   * once every payload is held there (`delivered: 0`: their fate is then in `GET /v1/stats`).
   * Never rejects.
   */
  settled: Promise<{ delivered: number; failed: number }>
}

/** Payloads to send, by source. */
export type Targets = Array<[SourceRuntime, WebhookPayload[]]>

/** How many admin payloads are offered to the queue at once (fewer when the backlog limit is lower). */
const CHUNK = 500
/**
 * The payloads of one audience sync recorded in the console, per source (the first ones: joiners,
 * then leavers): a sync of thousands would otherwise push every message out of its record (and,
 * with a queue server, spend its budget of followed deliveries). A deletion's are all recorded.
 */
const RECORDED_PER_SYNC = 100

/** Where a payload comes from, for the console: a deletion, an audience (by name), or a replay. */
export type Origin = Pick<AcceptOptions, 'origin' | 'name' | 'replay'>

/** A replayed payload: its exact bytes, when it was first accepted, whether it was kept as failed, and the URLs it goes to (default: all). */
export interface Replayed {
  body: string
  acceptedAt: number
  wasFailed: boolean
  urls?: number[]
}

type Delivery = QueuedDelivery & { payload: WebhookPayload; onSettled(delivered: boolean): void; recorded: boolean }

/**
 * The delivery of `payload`, followed by the console when `recorded`: named by a traceId (queue
 * server) or told of its attempts by a trace bound to its record once queued (memory).
 */
function delivery(state: SendState, source: string, payload: WebhookPayload, recorded: boolean, always: boolean, onSettled: (delivered: boolean) => void, replayed?: Replayed): Delivery {
  const traceId = recorded ? state.console?.traceId?.(always) : undefined
  const exact = replayed && { acceptedAt: replayed.acceptedAt, wasFailed: replayed.wasFailed, ...(replayed.urls && { urls: replayed.urls }) }
  return {
    source, type: payload.type, body: replayed?.body ?? JSON.stringify(payload), ...exact, onSettled, payload, recorded,
    ...(traceId !== undefined ? { traceId } : recorded && !state.queue.durable && { trace: deferredTrace() }),
  }
}

/** Records the payloads of a queued chunk that the console follows (see `recordAll` in ingest/accept.ts). */
function record(state: SendState, chunk: readonly Delivery[], origin: Origin): void {
  const recorder = state.console
  if (recorder === undefined) return
  for (const d of chunk) {
    if (!d.recorded) continue
    const trace = recorder.record(d.source, d.payload as unknown as Record<string, unknown>, d, origin)
    ;(d.trace as DeferredTrace | undefined)?.bind(trace)
  }
}

/** How long to wait for room in the backlog before offering a chunk again. */
const ROOM_WAIT_MS = 100
/**
 * With a queue server, how long a request's payloads wait for room in all: then what is not
 * queued is given up on (`NoRoomError`, answered 503), never held in this process's memory,
 * where a stop or a crash would lose it.
 */
export const ROOM_WAIT_LIMIT_MS = 5_000

/** Payloads not queued in time under the backlog limit (with a queue server); the rest was queued. */
export class NoRoomError extends Error {
  override name = 'NoRoomError'
  constructor(message: string, readonly closing: boolean) {
    super(message)
  }
}

/**
 * Queues the payloads in chunks that fit under each source's backlog limit, waiting for room
 * between them, so a large audience never pushes the backlog past it (ingest keeps its share).
 * In memory the wait has no bound; with a queue server it ends after `ROOM_WAIT_LIMIT_MS`, and
 * `queued` rejects with a `NoRoomError` for what is not in the server. `remember` is told what
 * was queued (all, or only some when `queued` rejects) before `queued` settles.
 * With a queue server, `settled` resolves once every payload is held there (or given up on):
 * delivering them is then the queue's business (any process's), counted in `GET /v1/stats`.
 */
export function send(state: SendState, targets: Targets, origin: Origin, remember?: (queued: readonly WebhookPayload[], all: boolean) => Promise<void>, replayed?: ReadonlyMap<WebhookPayload, Replayed>): Dispatch {
  const { queue } = state
  const outcomes: Promise<boolean>[] = []
  const size = Math.max(1, Math.min(CHUNK, state.maxPending))
  const holding: Promise<void>[] = []
  const done: WebhookPayload[] = []
  const deletion = origin.origin === 'deletion'
  const deadline = Date.now() + ROOM_WAIT_LIMIT_MS
  for (const [source, payloads] of targets) {
    const deliveries = payloads.map((payload, i) => {
      let onSettled!: (delivered: boolean) => void
      outcomes.push(new Promise<boolean>((resolve) => (onSettled = resolve)))
      return delivery(state, source.name, payload, state.console !== undefined && (deletion || i < RECORDED_PER_SYNC), deletion, onSettled, replayed?.get(payload))
    })
    const sending = (async () => {
      let i = 0
      try {
        while (i < deliveries.length) {
          const chunk = deliveries.slice(i, i + size)
          const closing = state.rooms.stopped
          if (!(await queue.enqueue(chunk, { ignoreLimit: closing && !queue.durable }))) {
            if (queue.durable && (closing || Date.now() >= deadline)) {
              const why = closing ? 'the collector is closing' : `too many deliveries pending, no room within ${ROOM_WAIT_LIMIT_MS / 1000} s`
              throw new NoRoomError(`Source "${source.name}": ${deliveries.length - i} of its ${count(deliveries.length, 'payload')} not queued (${why}).`, closing)
            }
            await state.rooms.wait(ROOM_WAIT_MS)
            continue
          }
          record(state, chunk, origin)
          if (queue.durable) for (const d of chunk) d.onSettled(false)
          done.push(...chunk.map((d) => d.payload))
          i += chunk.length
        }
      } catch (error) {
        state.log(`${source.name}: ${deliveries.length - i} admin payload(s) not queued: ${(error as Error).message}`)
        for (const d of deliveries.slice(i)) d.onSettled(false)
        throw error
      }
    })()
    state.rooms.track(sending)
    holding.push(sending)
  }
  const queued = Promise.allSettled(holding).then(async (results) => {
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failure === undefined) return remember?.(done, true)
    // What was queued is remembered even so: the sender's retry sends only the rest.
    if (done.length > 0) await remember?.(done, false).catch((error: Error) => state.log(`what was queued not remembered: ${error.message}`))
    throw failure.reason
  })
  queued.catch(() => {})
  const settled = Promise.all(outcomes).then((results) => {
    const delivered = results.filter(Boolean).length
    return { delivered, failed: queue.durable ? 0 : results.length - delivered }
  })
  return { ...listed(targets), queued, settled }
}

/**
 * `send` once `state` is there (the collector made in durable mode, see durable-start.ts). If
 * it never is (already reported), nothing is queued: `queued` rejects with its error.
 */
export function sendLater(state: Promise<SendState>, targets: Targets, origin: Origin): Dispatch {
  const sending = state.then((ready) => send(ready, targets, origin))
  const queued = sending.then((dispatch) => dispatch.queued)
  queued.catch(() => {})
  return { ...listed(targets), queued, settled: sending.then((dispatch) => dispatch.settled, () => ({ delivered: 0, failed: 0 })) }
}

/** What a dispatch of `targets` sends: its sources' names and the payloads. */
const listed = (targets: Targets): Pick<Dispatch, 'sources' | 'payloads'> => ({ sources: targets.map(([s]) => s.name), payloads: targets.flatMap(([, p]) => p) })
