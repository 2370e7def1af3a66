/**
 * Deletion requests and audience syncs (seed §6): each request checked, and the payloads it
 * sends, handed to `send` (./dispatch.ts), which queues them through the same delivery queue as
 * ingest and records them in the console. The memberships an audience sync diffs against are
 * kept in a `MembershipStore`; the syncs of one audience take turns in this process (`inTurn`).
 */
import { ValidationError, isValidationError } from '../../errors.js'
import { describe, isPlainObject } from '../../message/validate.js'
import { audienceSync, toWebhookPayload, type WebhookPayload } from '../../webhooks/index.js'
import type { SourceRuntime } from '../sources.js'
import { AUDIENCE_TURN_TTL_MS, type MembershipStore } from '../state/memberships.js'
import { send, type Dispatch, type Origin, type SendState, type Targets } from './dispatch.js'

export type { Dispatch } from './dispatch.js'

/** What the admin requests need: the sources by name and the memberships, and what sending takes. */
export interface AdminState extends SendState {
  byName: ReadonlyMap<string, SourceRuntime>
  memberships: MembershipStore
  /** The syncs of each audience (per source) under way in this process: the end of the last one's turn. */
  turns: Map<string, Promise<void>>
}

/**
 * What {@link Collector.requestDeletion} takes (and `POST /v1/deletions`): the user whose data each
 * source's webhook receivers should delete.
 */
export interface DeletionRequest {
  /** The user to delete, a non-empty string. */
  userId: string
  /** Names of the sources concerned. Default: every source. */
  sources?: string[]
}

/**
 * What {@link Collector.syncAudience} takes (and `POST /v1/audiences`): an audience's members now;
 * the collector diffs them against the previous sync and sends an identify per change.
 */
export interface AudienceSyncRequest {
  /** The source's name. */
  source: string
  /** The audience's name; its trait is `snakeCase(audience)` (`High Value` → `high_value`). */
  audience: string
  /** The audience's members (user ids) now. */
  members: string[]
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

/** One `delete` payload for each affected source whose Webhooks destination is enabled. */
export function requestDeletion(state: AdminState, input: DeletionRequest): Dispatch {
  return send(state, deletionTargets(state.byName, input), { origin: 'deletion' })
}

/**
 * A deletion request's payloads, by source (those affected whose Webhooks destination is
 * enabled); throws a `ValidationError` naming what is wrong with `input`.
 */
export function deletionTargets(byName: ReadonlyMap<string, SourceRuntime>, input: DeletionRequest): Targets {
  const request = requireObject(input, 'a deletion request { userId, sources? }')
  const userId = requireString(request.userId, 'userId')
  let affected: SourceRuntime[]
  if (request.sources === undefined) affected = [...byName.values()]
  else if (!Array.isArray(request.sources)) {
    throw new ValidationError('sources', `Expected \`sources\` to be an array of source names, got ${describe(request.sources)}.`)
  } else affected = [...new Set(request.sources.map((name: unknown, i) => knownSource(byName, name, `sources[${i}]`)))]
  const timestamp = new Date().toISOString()
  return affected
    .filter((source) => source.destination !== undefined)
    .map((source) => [source, [toWebhookPayload({ type: 'delete', userId, timestamp })]])
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
 * that) waits for it, and diffs against the membership it leaves; with a queue server, on every
 * process sharing it (`MembershipStore#turn`).
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
    // With a queue server, the turn among processes too: it ends once this sync's membership is
    // remembered (or its sync failed), so the next one, here or elsewhere, diffs against it.
    let endTurn: (() => Promise<void>) | undefined
    const end = () => endTurn?.().catch((error: Error) => state.log(`${source.name}: audience ${JSON.stringify(audience)}: its turn not ended (it ends by itself within ${AUDIENCE_TURN_TTL_MS / 1000} s): ${error.message}`))
    try {
      endTurn = await memberships.turn?.(source.name, audience)
      previous = await memberships.get(source.name, audience)
    } catch (error) {
      void end()
      // Said here too: over HTTP, a sync that waited its turn past the answer has no one else to tell.
      state.log(`${source.name}: audience ${JSON.stringify(audience)} not synced: ${(error as Error).message}`)
      throw error
    }
    let dispatch: Dispatch
    try {
      dispatch = send(state, [[source, changes(audience, previous ?? [], members)]], origin, (queued, all) =>
        memberships.set(source.name, audience, all ? members : applied(previous ?? [], queued)))
    } catch (error) {
      void end()
      throw error
    }
    void dispatch.queued.then(end, end)
    return dispatch
  })
}
