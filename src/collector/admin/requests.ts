/**
 * Deletion requests and audience syncs (seed §6): the payloads they send, through the same
 * delivery queue as ingest, recorded in the console's record as ingest records messages (their
 * attempts and outcome; an audience sync's first `RECORDED_PER_SYNC` per source). The memberships
 * an audience sync diffs against are kept in a `MembershipStore`; the syncs of one audience take
 * turns in this process (`inTurn`).
 */
import { ValidationError, isValidationError } from '../../errors.js'
import { describe, isPlainObject } from '../../message/validate.js'
import { audienceSync, toWebhookPayload, type WebhookPayload } from '../../webhooks/index.js'
import { deferredTrace, type AcceptOptions, type DeferredTrace, type Forward } from '../console/recorder.js'
import type { DeliveryQueue, DeliveryTrace, QueuedDelivery } from '../delivery/queue.js'
import type { SourceRuntime } from '../sources.js'
import { count, type Logger } from '../../logger.js'
import type { MembershipStore } from '../state/memberships.js'
import type { RoomWaits } from './room-waits.js'

/**
 * With the console: its record, where each payload is recorded once queued (as ingest records
 * messages), and in durable mode `traceId`, which names a payload's delivery so that any process
 * attempting it reports there (`always`: even past the console's per-second budget).
 */
export interface AdminRecord {
  record(source: string, payload: Record<string, unknown>, forward: Forward, admin: Pick<AcceptOptions, 'origin' | 'name'>): DeliveryTrace
  traceId?: (always?: boolean) => string | undefined
}

/** What the admin requests need: the sources by name, the queue, the memberships, the console's record. */
export interface AdminState {
  byName: ReadonlyMap<string, SourceRuntime>
  queue: DeliveryQueue
  memberships: MembershipStore
  /** The syncs of each audience (per source) under way in this process: the end of the last one's turn. */
  turns: Map<string, Promise<void>>
  /** The per-source backlog limit (`maxPendingDeliveries`). */
  maxPending: number
  log: Logger
  console?: AdminRecord
  /** The sends waiting for room; `close()` stops their waits before the queue's drain. */
  rooms: RoomWaits
}

export interface DeletionRequest {
  userId: string
  /** Names of the sources concerned. Default: every source. */
  sources?: string[]
}

export interface AudienceSyncRequest {
  /** The source's name. */
  source: string
  audience: string
  /** The audience's members (user ids) now. */
  members: string[]
}

/** What a deletion or sync sent, and a promise of how its deliveries ended. */
export interface Dispatch {
  /** Names of the sources that got payloads. */
  sources: string[]
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

/** A name or user id: a string with something in it but spaces (a form's slip would name nobody, or everybody's blank). */
function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ValidationError(field, `Expected \`${field}\` to be a non-empty string${typeof value === 'string' && value !== '' ? ' (not only whitespace)' : ''}, got ${describe(value)}.`)
  }
  return value
}

function requireObject(value: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(value)) throw new ValidationError('body', `Expected ${what}, got ${describe(value)}.`)
  return value
}

function knownSource(byName: ReadonlyMap<string, SourceRuntime>, name: unknown, field: string): SourceRuntime {
  const source = byName.get(requireString(name, field))
  if (!source) {
    throw new ValidationError(field, `Unknown source ${describe(name)}; known: ${[...byName.keys()].join(', ')}.`)
  }
  return source
}

/** How many admin payloads are offered to the queue at once (fewer when the backlog limit is lower). */
const CHUNK = 500
/**
 * The payloads of one audience sync recorded in the console, per source (the first ones: joiners,
 * then leavers): a sync of thousands would otherwise push every message out of its record (and,
 * with a queue server, spend its budget of followed deliveries). A deletion's are all recorded.
 */
const RECORDED_PER_SYNC = 100

/** Where a payload comes from, for the console: a deletion, or an audience (by name). */
type Origin = Required<Pick<AcceptOptions, 'origin'>> & Pick<AcceptOptions, 'name'>

type Delivery = QueuedDelivery & { payload: WebhookPayload; onSettled(delivered: boolean): void; recorded: boolean }

/**
 * The delivery of `payload`, followed by the console when `recorded`: named by a traceId (queue
 * server) or told of its attempts by a trace bound to its record once queued (memory).
 */
function delivery(state: AdminState, source: string, payload: WebhookPayload, recorded: boolean, always: boolean, onSettled: (delivered: boolean) => void): Delivery {
  const traceId = recorded ? state.console?.traceId?.(always) : undefined
  return {
    source, type: payload.type, body: JSON.stringify(payload), onSettled, payload, recorded,
    ...(traceId !== undefined ? { traceId } : recorded && !state.queue.durable && { trace: deferredTrace() }),
  }
}

/** Records the payloads of a queued chunk that the console follows (see `recordAll` in ingest/accept.ts). */
function record(state: AdminState, chunk: readonly Delivery[], origin: Origin): void {
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
function send(state: AdminState, targets: Array<[SourceRuntime, WebhookPayload[]]>, origin: Origin, remember?: (queued: readonly WebhookPayload[], all: boolean) => Promise<void>): Dispatch {
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
      return delivery(state, source.name, payload, state.console !== undefined && (deletion || i < RECORDED_PER_SYNC), deletion, onSettled)
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
  return { sources: targets.map(([s]) => s.name), payloads: targets.flatMap(([, p]) => p), queued, settled }
}

/** One `delete` payload for each affected source whose Webhooks destination is enabled. */
export function requestDeletion(state: AdminState, input: DeletionRequest): Dispatch {
  const { byName } = state
  const request = requireObject(input, 'a deletion request { userId, sources? }')
  const userId = requireString(request.userId, 'userId')
  let affected: SourceRuntime[]
  if (request.sources === undefined) affected = [...byName.values()]
  else if (!Array.isArray(request.sources)) {
    throw new ValidationError('sources', `Expected \`sources\` to be an array of source names, got ${describe(request.sources)}.`)
  } else affected = [...new Set(request.sources.map((name: unknown, i) => knownSource(byName, name, `sources[${i}]`)))]
  const timestamp = new Date().toISOString()
  return send(
    state,
    affected
      .filter((source) => source.destination !== undefined)
      .map((source) => [source, [toWebhookPayload({ type: 'delete', userId, timestamp })]]),
    { origin: 'deletion' },
  )
}

/** `audienceSync`'s payloads, its refusal of a name with no letter or digit naming `audience`. */
function changes(audience: string, previous: readonly string[], members: readonly string[]): WebhookPayload[] {
  try {
    return audienceSync(audience, previous, members)
  } catch (error) {
    // The audience's name is `audience` here; audienceSync calls it `audienceName`.
    if (!isValidationError(error) || error.field !== 'audienceName') throw error
    throw new ValidationError('audience', error.message.replaceAll('`audienceName`', '`audience`'))
  }
}

/** `previous` with the changes of the identify payloads `queued` made (a sync cut short: only those). */
function applied(previous: readonly string[], queued: readonly WebhookPayload[]): string[] {
  const members = new Set(previous)
  for (const payload of queued) {
    if (payload.type !== 'identify' || payload.userId == null) continue
    if (Object.values(payload.traits ?? {})[0] === true) members.add(payload.userId)
    else members.delete(payload.userId)
  }
  return [...members]
}

/**
 * Runs `start` once the turn of every earlier sync of `key` has ended: when its payloads were
 * queued and its membership remembered, or when it failed (the old membership kept). A sync can
 * only diff against the membership the one before it leaves, and knows which only then.
 */
function inTurn(turns: Map<string, Promise<void>>, key: string, start: () => Promise<Dispatch>): Promise<Dispatch> {
  const started = (turns.get(key) ?? Promise.resolve()).then(start)
  const ended = started.then((dispatch) => dispatch.queued).then(() => {}, () => {})
  turns.set(key, ended)
  void ended.then(() => turns.get(key) === ended && turns.delete(key))
  return started
}

/**
 * The identify payloads of an audience's membership changes since its previous sync on this
 * source (every member on the first sync). The membership is remembered once the payloads are
 * queued; of a sync cut short, only the changes that were queued (so the next sync, or the same
 * one sent again, sends the rest); a source without
 * an enabled destination sends nothing and remembers nothing. Syncs of one audience take turns:
 * one started before the previous one is queued (an `await` of this promise does not wait for
 * that) waits for it, and diffs against the membership it leaves.
 */
export async function syncAudience(state: AdminState, input: AudienceSyncRequest): Promise<Dispatch> {
  const { byName, memberships } = state
  const request = requireObject(input, 'an audience sync { source, audience, members }')
  const source = knownSource(byName, request.source, 'source')
  const audience = requireString(request.audience, 'audience')
  if (!Array.isArray(request.members)) {
    throw new ValidationError('members', `Expected \`members\` to be an array of user ids, got ${describe(request.members)}.`)
  }
  const members = [...new Set(request.members.map((id: unknown, i) => requireString(id, `members[${i}]`)))]
  const origin: Origin = { origin: 'audience', name: audience }
  if (source.destination === undefined) return send(state, [], origin)
  // A name refused at once, not after the turns of the syncs before it.
  changes(audience, [], [])
  return inTurn(state.turns, JSON.stringify([source.name, audience]), async () => {
    let previous: readonly string[] | undefined
    try {
      previous = await memberships.get(source.name, audience)
    } catch (error) {
      // Said here too: over HTTP, a sync that waited its turn past the answer has no one else to tell.
      state.log(`${source.name}: audience ${JSON.stringify(audience)} not synced: ${(error as Error).message}`)
      throw error
    }
    return send(state, [[source, changes(audience, previous ?? [], members)]], origin, (queued, all) =>
      memberships.set(source.name, audience, all ? members : applied(previous ?? [], queued)))
  })
}
