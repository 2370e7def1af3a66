/**
 * The console's admin endpoints (all with `Authorization: Bearer <admin token>`), usable without
 * the console too (README, "Admin endpoints"):
 *
 * - `GET  /v1/admin/sources`                   each source's Webhooks settings (secrets and URLs' credentials masked)
 * - `GET  /v1/admin/sources/{name}/webhooks`   one source's, with its version as `ETag`
 * - `PUT  /v1/admin/sources/{name}/webhooks`   change them: `{ enabled?, urls?, sharedSecret? }`;
 *                                              with `If-Match`, only if still of that version (else 409)
 * - `GET  /v1/admin/messages?since=&boot=&limit=` and filters `type=&event=&source=&origin=&userId=&anonymousId=&outcome=`:
 *                                              recent messages (and deletion / audience payloads) and their deliveries
 * - `GET  /v1/admin/messages/stream?since=&boot=` and the same filters: the same, as Server-Sent Events
 * - `GET  /v1/admin/messages/{id}`             one of them, with `payload`: the exact body forwarded
 * - `POST /v1/admin/messages/{id}/retry`       deliver a failed message again
 * - `GET  /v1/admin/activity`                  delivered / retrying / failed per minute, last hour
 * - `GET  /v1/admin/audiences?source=&audience=` an audience's members as its last sync left them
 *                                              (what the console's confirmation of a sync names)
 * - `POST /v1/admin/replay`                    deliver again the payloads of a window still kept (../replay/replay.ts)
 * - `GET  /v1/admin/endpoints`, `POST /v1/admin/endpoints/enable`: endpoint health (./health.ts)
 */
import type { AdminGuard } from '../admin/guard.js'
import { fromMessageError, HttpProblem, jsonResponse, methodNotAllowed, notFound, retryLater } from '../http/errors.js'
import { NoRoomError } from '../admin/dispatch.js'
import { QueueUnavailableError } from '../delivery/queue.js'
import { stringifyExact } from '../../message/exact-json.js'
import { parseJson } from '../ingest/parse.js'
import { readBodyText } from '../http/read-body.js'
import type { ConsoleRecorder, MessageRecord } from './recorder.js'
import { shownRecord } from './records.js'
import type { SourceSettings } from './settings.js'
import type { MessagesAnswer, MessageStreams } from './stream.js'
import { etag } from './versions.js'
import type { ReplayAnswer } from '../replay/replay.js'
import { handleHealthEndpoint, type HealthContext } from './health.js'

export interface ConsoleContext {
  /** The admin token's check, with its limit on wrong tokens (shared with the other admin endpoints). */
  guard: AdminGuard
  settings: SourceSettings
  recorder: ConsoleRecorder
  streams: MessageStreams
  /** Queues a failed message's delivery again; an `HttpProblem` (404, 409) says why it cannot. */
  retry(id: string): Promise<void>
  /** The members of `audience` of source `source` as its last sync left them (`undefined`: never synced); an `HttpProblem` names an unknown source. */
  members(source: string, audience: string): Promise<readonly string[] | undefined>
  /** Replays the kept payloads `body` names; a `ValidationError` names the field that is wrong. */
  replay(body: unknown): Promise<ReplayAnswer>
  /** Endpoint health: `GET /v1/admin/endpoints`, `POST /v1/admin/endpoints/enable` (./health.ts). */
  health: HealthContext
}

const SETTINGS = /^\/v1\/admin\/sources\/([^/]+)\/webhooks$/
const MESSAGE = /^\/v1\/admin\/messages\/(\d+)(\/retry)?$/

function only(method: string, request: Request, path: string): void {
  if (request.method !== method) throw methodNotAllowed(request.method, path, method)
}

function integerParam(url: URL, name: string, fallback: number): number {
  const text = url.searchParams.get(name)
  if (text === null || text === '') return fallback
  if (!/^\d+$/.test(text)) throw new HttpProblem(400, 'BAD_REQUEST', `Expected \`${name}\` to be an integer ≥ 0, got "${text}".`, { field: name })
  return Number(text)
}

/**
 * The cursor a reader's `since` (and `boot`) stands for here. A cursor of another process (a
 * `boot` that is not this one's, or, from a reader that sends none, a version beyond this
 * process's) is from before a restart: the reader gets everything, and the answer's `boot` tells
 * it to drop what it had.
 */
function cursorOf(url: URL, recorder: ConsoleRecorder): number {
  const since = integerParam(url, 'since', 0)
  const boot = url.searchParams.get('boot')
  if (boot !== null && boot !== '' && boot !== recorder.boot) return 0
  return since > recorder.version ? 0 : since
}

const OUTCOMES = ['queued', 'retrying', 'delivered', 'failed']

/**
 * What a reader's filters keep (each an exact match; those absent or empty keep every record).
 * `outcome` is the delivery's outcome now: a stream filtered by it sends a record's changes while
 * it has that outcome, not the change that takes it elsewhere.
 */
function filterOf(url: URL): (record: MessageRecord) => boolean {
  const get = (name: string) => url.searchParams.get(name) || undefined
  const type = get('type'), event = get('event'), source = get('source'), origin = get('origin')
  const userId = get('userId'), anonymousId = get('anonymousId'), outcome = get('outcome')
  if (outcome !== undefined && !OUTCOMES.includes(outcome)) {
    throw new HttpProblem(400, 'BAD_REQUEST', `Expected \`outcome\` to be one of ${OUTCOMES.join(', ')}, got "${outcome}".`, { field: 'outcome' })
  }
  return (r) =>
    (!type || r.type === type) && (!event || r.name === event) && (!source || r.source === source) && (!origin || r.origin === origin)
    && (!userId || r.userId === userId) && (!anonymousId || r.anonymousId === anonymousId) && (!outcome || r.delivery.outcome === outcome)
}

/**
 * With `since` (`paged`): the changes after it, oldest change first in pages of `limit` (each
 * page listed newest first), `version` the last change sent and `more` when there are others.
 * Without (`GET /v1/admin/messages` alone): the latest `limit` records and the current version.
 */
function messages(url: URL, recorder: ConsoleRecorder, since: number, paged: boolean, keep = filterOf(url), limit = integerParam(url, 'limit', 200)): MessagesAnswer {
  const { boot } = recorder
  const unlisted = recorder.unlistedCount > 0 ? { unlisted: recorder.unlistedCount } : {}
  if (!paged) {
    const version = recorder.version
    return { boot, version, messages: recorder.changedSince(0).filter(keep).slice(0, limit).map(shownRecord), ...unlisted }
  }
  const page = recorder.changesPage(since, limit, keep)
  return { boot, version: page.version, messages: page.messages.map(shownRecord), ...(page.more && { more: true }), ...unlisted }
}

/** The `{name}` of a settings path, decoded; malformed percent-encoding names no source (404). */
function sourceName(encoded: string, path: string): string {
  try {
    return decodeURIComponent(encoded)
  } catch {
    throw notFound(path, `No source is named ${JSON.stringify(encoded)}: its percent-encoding is malformed.`)
  }
}

/** A record as JSON: a message's integers beyond 2^53 (kept as `bigint`) are written digit for digit. */
const exactJson = (body: unknown, status = 200) =>
  new Response(stringifyExact(body, true), { status, headers: { 'content-type': 'application/json; charset=utf-8' } })

export async function handleConsoleEndpoint(request: Request, path: string, context: ConsoleContext): Promise<Response> {
  await context.guard.check(request)
  const url = new URL(request.url)
  if (path === '/v1/admin/sources') {
    only('GET', request, path)
    const { store } = context.settings
    const notice = context.settings.notice
    return jsonResponse(200, {
      settings: { store: store.kind, durable: store.durable, ...(notice && { notice }) },
      sources: context.settings.view(),
    })
  }
  const settings = SETTINGS.exec(path)
  if (settings) {
    if (request.method === 'GET') {
      const source = context.settings.viewOf(sourceName(settings[1], path))
      return jsonResponse(200, { source }, { etag: etag(source.version) })
    }
    if (request.method !== 'PUT') throw methodNotAllowed(request.method, path, 'GET, PUT')
    const { value: body } = parseJson(await readBodyText(request))
    const ifMatch = request.headers.get('if-match') ?? undefined
    const { source, persisted } = await context.settings.update(sourceName(settings[1], path), body, ifMatch)
    return jsonResponse(200, { success: true, source, persisted }, { etag: etag(source.version) })
  }
  if (path === '/v1/admin/messages') {
    only('GET', request, path)
    return exactJson(messages(url, context.recorder, cursorOf(url, context.recorder), url.searchParams.has('since')))
  }
  if (path === '/v1/admin/messages/stream') {
    only('GET', request, path)
    // The `boot` check applies to the reader's cursor only: later cursors are this process's.
    // Filters and `limit` are read (and a bad one refused) before the stream opens: past that, an
    // error would have no answer to go to.
    const keep = filterOf(url)
    const limit = integerParam(url, 'limit', 200)
    return context.streams.open((since) => messages(url, context.recorder, since, true, keep, limit), cursorOf(url, context.recorder))
  }
  if (path === '/v1/admin/audiences') {
    only('GET', request, path)
    const [source, audience] = ['source', 'audience'].map((name) => {
      const value = url.searchParams.get(name)
      if (value === null || value.trim() === '') throw new HttpProblem(400, 'BAD_REQUEST', `Expected \`${name}\` to be a non-empty string, got ${value === null ? 'none' : JSON.stringify(value)}.`, { field: name })
      return value
    })
    const members = await context.members(source, audience)
    return jsonResponse(200, { source, audience, synced: members !== undefined, members: members ?? [] })
  }
  if (path === '/v1/admin/replay') {
    only('POST', request, path)
    const body = parseJson(await readBodyText(request)).value
    try {
      return jsonResponse(202, { success: true, ...(await context.replay(body)) })
    } catch (error) {
      if (error instanceof NoRoomError) throw retryLater(error.closing ? 'CLOSED' : 'BACKLOG_FULL', `${error.message} Retry later.`)
      if (error instanceof QueueUnavailableError) throw retryLater('QUEUE_UNAVAILABLE', `${error.message} Retry later.`)
      throw fromMessageError(error, '') ?? error
    }
  }
  if (path === '/v1/admin/activity') {
    only('GET', request, path)
    return jsonResponse(200, { minutes: context.recorder.activity() })
  }
  if (path.startsWith('/v1/admin/endpoints')) return handleHealthEndpoint(request, path, context.health)
  const message = MESSAGE.exec(path)
  if (message) {
    const [, id, retry] = message
    if (retry) {
      only('POST', request, path)
      await context.retry(id)
      const record = context.recorder.get(id)
      return exactJson({ success: true, message: record && shownRecord(record) }, 202)
    }
    only('GET', request, path)
    const record = context.recorder.get(id)
    if (record === undefined) throw notFound(path, `No message ${JSON.stringify(id)} is in the console's record.`)
    // The body as each receiver got it: only here, so that a list of 500 records stays small.
    const payload = context.recorder.payloadOf(id)
    return exactJson({ ...shownRecord(record), ...(payload !== undefined && { payload }) })
  }
  throw notFound(path)
}
