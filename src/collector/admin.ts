/**
 * Deletion requests and audience syncs (seed §6), as methods of the collector and as the admin
 * endpoints `POST /v1/deletions` and `POST /v1/audiences` (only with an admin token, sent as
 * `Authorization: Bearer <token>`).
 */
import { ValidationError, isValidationError } from '../errors.js'
import { describe, isPlainObject } from '../message/validate.js'
import { audienceSync, toWebhookPayload, type WebhookPayload } from '../webhooks/index.js'
import { requireBearer } from './auth.js'
import { fromMessageError, jsonResponse } from './http-errors.js'
import { parseJson } from './ingest.js'
import { readBodyText } from './read-body.js'
import type { SourceRuntime } from './source.js'

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
  /** Resolves once every payload has been delivered or has failed for good. Never rejects. */
  settled: Promise<{ delivered: number; failed: number }>
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

function requireString(value: unknown, field: string): string {
  if (!nonEmptyString(value)) throw new ValidationError(field, `Expected \`${field}\` to be a non-empty string, got ${describe(value)}.`)
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

function send(targets: Array<[SourceRuntime, WebhookPayload[]]>): Dispatch {
  const outcomes: Promise<boolean>[] = []
  for (const [source, payloads] of targets) for (const p of payloads) outcomes.push(source.queue!.push(p))
  const settled = Promise.all(outcomes).then((results) => {
    const delivered = results.filter(Boolean).length
    return { delivered, failed: results.length - delivered }
  })
  return { sources: targets.map(([s]) => s.name), payloads: targets.flatMap(([, p]) => p), settled }
}

/** One `delete` payload for each affected source whose Webhooks destination is enabled. */
export function requestDeletion(byName: ReadonlyMap<string, SourceRuntime>, input: DeletionRequest): Dispatch {
  const request = requireObject(input, 'a deletion request { userId, sources? }')
  const userId = requireString(request.userId, 'userId')
  let affected: SourceRuntime[]
  if (request.sources === undefined) affected = [...byName.values()]
  else if (!Array.isArray(request.sources)) {
    throw new ValidationError('sources', `Expected \`sources\` to be an array of source names, got ${describe(request.sources)}.`)
  } else affected = [...new Set(request.sources.map((name: unknown, i) => knownSource(byName, name, `sources[${i}]`)))]
  const timestamp = new Date().toISOString()
  return send(
    affected
      .filter((source) => source.queue !== undefined)
      .map((source) => [source, [toWebhookPayload({ type: 'delete', userId, timestamp })]]),
  )
}

/**
 * The identify payloads of an audience's membership changes since its previous sync on this
 * source (every member on the first sync). The membership is remembered only once sent: a source
 * without an enabled destination sends nothing and remembers nothing.
 */
export function syncAudience(
  byName: ReadonlyMap<string, SourceRuntime>,
  memberships: Map<string, readonly string[]>,
  input: AudienceSyncRequest,
): Dispatch {
  const request = requireObject(input, 'an audience sync { source, audience, members }')
  const source = knownSource(byName, request.source, 'source')
  const audience = requireString(request.audience, 'audience')
  if (!Array.isArray(request.members)) {
    throw new ValidationError('members', `Expected \`members\` to be an array of user ids, got ${describe(request.members)}.`)
  }
  const members = [...new Set(request.members.map((id: unknown, i) => requireString(id, `members[${i}]`)))]
  if (source.queue === undefined) return send([])
  const key = JSON.stringify([source.name, audience])
  let payloads: WebhookPayload[]
  try {
    payloads = audienceSync(audience, memberships.get(key) ?? [], members)
  } catch (error) {
    // The audience's name is `audience` here; audienceSync calls it `audienceName`.
    if (!isValidationError(error) || error.field !== 'audienceName') throw error
    throw new ValidationError('audience', error.message.replaceAll('`audienceName`', '`audience`'))
  }
  memberships.set(key, members)
  return send([[source, payloads]])
}

export type AdminRoute = 'deletions' | 'audiences'

export interface AdminContext {
  adminToken: string
  deletion(request: DeletionRequest): Dispatch
  audience(request: AudienceSyncRequest): Dispatch
}

/** `POST /v1/deletions` and `POST /v1/audiences`: answers once the payloads are queued. */
export async function handleAdmin(route: AdminRoute, request: Request, context: AdminContext): Promise<Response> {
  await requireBearer(request, context.adminToken)
  const body = parseJson(await readBodyText(request))
  try {
    const dispatch =
      route === 'deletions'
        ? context.deletion(body as DeletionRequest)
        : context.audience(body as AudienceSyncRequest)
    return jsonResponse(200, { success: true, sources: dispatch.sources, sent: dispatch.payloads.length })
  } catch (error) {
    throw fromMessageError(error, '') ?? error
  }
}
