/**
 * The fetch-style handler: `(request) => Promise<Response>`, web-standard globals only. Routes a
 * request to ingest (`../ingest/accept.ts`) or to the admin endpoints (`../admin/`), answers CORS
 * preflights and refuses work while closing. Every failure is an `HttpProblem` that renders itself, through
 * the one `catch` at the top; anything else is a bug, reported and answered 500.
 */
import type { Logger } from '../../logger.js'
import type { MessageType } from '../../message/types.js'
import { handleAdmin, type AdminContext, type AdminRoute } from '../admin/endpoints.js'
import type { BodyKind } from '../ingest/parse.js'
import type { IngestTally } from '../stats.js'
import { corsHeaders, preflight } from './cors.js'
import { HttpProblem, methodNotAllowed, notFound, toHttpProblem } from './errors.js'

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

export interface HandlerContext {
  ingest(kind: BodyKind, request: Request): Promise<Response>
  admin: AdminContext | undefined
  isClosed(): boolean
  tally: IngestTally
  log: Logger
  onError(error: unknown): void
}

export function createHandler(context: HandlerContext): (request: Request) => Promise<Response> {
  const routes = buildRoutes(context.admin !== undefined)

  return async function fetch(request: Request): Promise<Response> {
    context.tally.request()
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
      return await context.ingest(route.body, request)
    } catch (error) {
      const problem = toHttpProblem(error)
      context.tally.rejected()
      if (problem.code === 'INTERNAL') context.onError(error)
      else context.log(`${request.method} ${request.url} → ${problem.status} ${problem.code}: ${problem.message}`)
      request.body?.cancel().catch(() => {})
      return problem.toResponse(corsHeaders(request))
    }
  }
}
