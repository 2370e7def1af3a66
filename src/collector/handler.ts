/**
 * The fetch-style handler: `(request) => Promise<Response>`, web-standard globals only. Routes a
 * request, authenticates it, reads and validates its body, and hands each accepted message to
 * its source's delivery queue. Every failure is an `HttpProblem` that renders itself, through
 * the one `catch` at the top; anything else is a bug, reported and answered 500.
 */
import type { Logger } from '../logger.js'
import type { MessageType } from '../message/types.js'
import { toWebhookPayload, type WebhookPayload } from '../webhooks/index.js'
import { handleAdmin, type AdminContext, type AdminRoute } from './admin.js'
import { missingWriteKey, unknownWriteKey, writeKeyFromBody, writeKeyFromHeader } from './auth.js'
import { corsHeaders, preflight } from './cors.js'
import {
  HttpProblem,
  jsonResponse,
  methodNotAllowed,
  notFound,
  toHttpProblem,
} from './http-errors.js'
import { extractMessages, parseJson, type BodyKind, type Message } from './ingest.js'
import { readBodyText } from './read-body.js'
import { integrationEnabled } from './routing.js'
import type { SourceRuntime } from './source.js'

type Route = { kind: 'ingest'; body: BodyKind } | { kind: 'admin'; name: AdminRoute }

const SINGLE: Record<string, MessageType> = {
  identify: 'identify', track: 'track', page: 'page', screen: 'screen', group: 'group', alias: 'alias',
  // The short forms analytics.js posts to.
  i: 'identify', t: 'track', p: 'page', s: 'screen', g: 'group', a: 'alias',
}

function buildRoutes(admin: boolean): Map<string, Route> {
  const routes = new Map<string, Route>([
    ['/v1/batch', { kind: 'ingest', body: 'batch' }],
    ['/v1/b', { kind: 'ingest', body: 'batch' }],
  ])
  for (const [path, type] of Object.entries(SINGLE)) routes.set(`/v1/${path}`, { kind: 'ingest', body: type })
  if (admin) {
    routes.set('/v1/deletions', { kind: 'admin', name: 'deletions' })
    routes.set('/v1/audiences', { kind: 'admin', name: 'audiences' })
  }
  return routes
}

/** A batch (or single call) the collector accepted. */
export interface AcceptedBatch {
  source: string
  /** The parsed request body, as sent. */
  body: Record<string, unknown>
  /** Its messages, validated and normalised (what is forwarded). */
  messages: Message[]
}

export interface HandlerContext {
  lookup(writeKey: string): SourceRuntime | undefined
  admin: AdminContext | undefined
  isClosed(): boolean
  counters: { requests: number; rejected: number; received: number; skipped: number }
  log: Logger
  onError(error: unknown): void
  onAccepted?: (batch: AcceptedBatch) => void
}

const CONTENT_TYPE = /^(?:application\/json|text\/plain)(?:\s*;\s*(.*))?$/i

function checkContentType(request: Request): void {
  const header = request.headers.get('content-type')
  if (header === null || header.trim() === '') return
  const match = CONTENT_TYPE.exec(header.trim())
  const charset = match?.[1] ? /charset\s*=\s*"?([^";\s]+)/i.exec(match[1])?.[1] : undefined
  if (!match || (charset !== undefined && !/^utf-?8$/i.test(charset))) {
    throw new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${JSON.stringify(header)} is not accepted; send application/json or text/plain (UTF-8).`)
  }
}

export function createHandler(context: HandlerContext): (request: Request) => Promise<Response> {
  const routes = buildRoutes(context.admin !== undefined)

  async function ingest(kind: BodyKind, request: Request): Promise<Response> {
    checkContentType(request)
    const headerKey = writeKeyFromHeader(request)
    let source = headerKey === undefined ? undefined : context.lookup(headerKey)
    if (headerKey !== undefined && source === undefined) throw unknownWriteKey()
    const body = parseJson(await readBodyText(request))
    if (source === undefined) {
      const key = writeKeyFromBody(body)
      if (key === undefined) throw missingWriteKey()
      source = context.lookup(key)
      if (source === undefined) throw unknownWriteKey()
    }
    const messages = extractMessages(kind, body, new Date().toISOString())
    const payloads: WebhookPayload[] = []
    if (source.queue !== undefined) {
      for (const message of messages) {
        if (integrationEnabled(message.integrations)) payloads.push(toWebhookPayload(message))
      }
      if (!source.queue.hasRoom(payloads.length)) {
        throw new HttpProblem(503, 'BACKLOG_FULL', `Too many deliveries pending for source "${source.name}"; retry later.`, {
          headers: { 'retry-after': '5' },
        })
      }
      for (const payload of payloads) void source.queue.push(payload)
    }
    context.counters.received += messages.length
    context.counters.skipped += messages.length - payloads.length
    if (context.log.enabled) context.log(`${source.name}: accepted ${messages.length} message(s), forwarding ${payloads.length}`)
    context.onAccepted?.({ source: source.name, body: body as Record<string, unknown>, messages })
    return jsonResponse(200, { success: true }, corsHeaders(request))
  }

  return async function fetch(request: Request): Promise<Response> {
    context.counters.requests++
    try {
      const path = new URL(request.url).pathname.replace(/\/+$/, '') || '/'
      const route = routes.get(path)
      if (route === undefined) throw notFound(path)
      if (request.method === 'OPTIONS') return preflight(request)
      if (request.method !== 'POST') throw methodNotAllowed(request.method, path)
      if (context.isClosed()) {
        throw new HttpProblem(503, 'CLOSED', 'The collector is shutting down; retry later.', { headers: { 'retry-after': '5' } })
      }
      if (route.kind === 'admin') {
        const response = await handleAdmin(route.name, request, context.admin!)
        for (const [name, value] of Object.entries(corsHeaders(request))) response.headers.set(name, value)
        return response
      }
      return await ingest(route.body, request)
    } catch (error) {
      const problem = toHttpProblem(error)
      context.counters.rejected++
      if (problem.code === 'INTERNAL') context.onError(error)
      else context.log(`${request.method} ${request.url} → ${problem.status} ${problem.code}: ${problem.message}`)
      request.body?.cancel().catch(() => {})
      return problem.toResponse(corsHeaders(request))
    }
  }
}
