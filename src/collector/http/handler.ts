/**
 * The collector's handler, web-standard globals only: `(head, full) => Promise<Response |
 * JsonAnswer>` (see ./direct.ts; `createCollector` makes it the fetch-style `fetch`). Sends a
 * request, by its route (./routes.ts), to ingest (`../ingest/accept.ts`) or to the admin endpoints (`../admin/`), answers CORS
 * preflights and refuses work while closing. Every failure is an `HttpProblem` that renders itself, through
 * the one `catch` at the top; anything else is a bug, reported and answered 500.
 */
import type { Logger } from '../../logger.js'
import { maskUrl } from '../../secrets.js'
import { handleAdmin, type AdminContext } from '../admin/endpoints.js'
import { routeConsole, type ConsoleContext } from '../console/index.js'
import { QUEUE_WRITE_WAIT_MS } from '../delivery/queue.js'
import type { Ingest } from '../ingest/accept.js'
import type { IngestTally } from '../stats.js'
import { corsHeaders, preflight } from './cors.js'
import type { CollectorCore, RequestHead } from './direct.js'
import { HttpProblem, jsonAnswer, methodNotAllowed, retryLater, notFound, toHttpProblem, type JsonAnswer } from './errors.js'
import { readBodyText } from './read-body.js'
import { ADMIN_PATHS, buildRoutes, routePath } from './routes.js'
import { describe } from '../../message/validate.js'

const isAdminPath = (path: string) => ADMIN_PATHS.has(path) || path.startsWith('/v1/admin/')

/**
 * Every admin answer (the console's endpoints, /v1/deletions, /v1/audiences, /v1/stats): never
 * kept by a cache, never sniffed as another type, and without CORS headers, so no other origin's
 * page reads one (the console is served by the collector itself: same origin). Their preflight
 * is not answered either: it goes to the endpoint, which refuses it (401 without the token).
 */
const ADMIN_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }

function adminAnswer(response: Response): Response {
  for (const [name, value] of Object.entries(ADMIN_HEADERS)) response.headers.set(name, value)
  return response
}

export interface HandlerContext {
  ingest: Ingest
  admin: AdminContext | undefined
  isClosed(): boolean
  /**
   * Whether the durable collector is still starting (bus, saved settings) once the request's
   * wait for that is over: ingest and the admin endpoints are then answered 503 QUEUE_UNAVAILABLE.
   */
  isStarting(): boolean
  tally: IngestTally
  log: Logger
  onError(error: unknown): void
  /** The console and its admin endpoints (only with an admin token). */
  console: ConsoleContext | undefined
}

/**
 * Throws a `TypeError` unless `value` is a `Request` (or has what the collector reads of one:
 * `url`, `method`, `headers.get`). A URL string got an internal TypeError, answered 500 and
 * reported as an unexpected error. A string is not shown: its query may hold a write key.
 */
export function checkRequest(value: unknown): asserts value is Request {
  // `in`, not a read: the check costs no getter call (and cannot throw one's error).
  const request = value as Partial<Request> | null
  if (typeof request === 'object' && request !== null && 'url' in request && 'method' in request && typeof request.headers?.get === 'function') return
  const url = typeof value === 'string' || value instanceof URL
  const got = url ? `a ${typeof value === 'string' ? 'string' : 'URL'}` : typeof value === 'object' && value !== null ? `${describe(value)} without the \`url\`, \`method\` and \`headers\` of a Request` : describe(value)
  throw new TypeError(`collector.fetch expects a Request, got ${got}${url ? '; for a URL, pass `new Request(url, { method, headers, body })`' : ''}.`)
}

export function createHandler(context: HandlerContext): CollectorCore {
  const routes = buildRoutes(context.admin !== undefined)

  /** analytics.js's metrics: read (within the body limit), counted, answered 200, not forwarded. */
  async function metrics(request: RequestHead): Promise<JsonAnswer> {
    await readBodyText(request)
    context.tally.metrics()
    return jsonAnswer(200, { success: true }, corsHeaders(request))
  }

  return async function answer(request, full) {
    context.tally.request()
    let path = '/'
    try {
      path = routePath(request.url)
      const page = routeConsole(request, path, context.console, full)
      if (page !== undefined) return path.startsWith('/v1/admin/') ? adminAnswer(await page) : await page
      const route = routes.get(path)
      if (route === undefined) {
        // Without an admin token the admin endpoints do not exist; say how to enable them.
        const admin = context.admin === undefined && isAdminPath(path)
        throw notFound(path, admin ? `No endpoint at ${path}: the admin endpoints are enabled by an admin token (\`adminToken\`, \`--admin-token\`).` : undefined)
      }
      if (request.method === 'OPTIONS' && route.kind !== 'admin') return preflight(request)
      const method = route.kind === 'admin' && route.method ? route.method : 'POST'
      if (request.method !== method) throw methodNotAllowed(request.method, path, route.kind === 'admin' ? method : `${method}, OPTIONS`)
      if (context.isClosed()) {
        throw retryLater('CLOSED', 'The collector is shutting down; retry later.')
      }
      if (route.kind !== 'metrics' && context.isStarting()) {
        throw retryLater('QUEUE_UNAVAILABLE', `The queue server did not answer within ${QUEUE_WRITE_WAIT_MS / 1000} s. Retry later.`)
      }
      if (route.kind === 'admin') return adminAnswer(await handleAdmin(route.name, full(), context.admin!))
      if (route.kind === 'metrics') return await metrics(request)
      return await context.ingest(route.body, request, { keyInQuery: route.keyInQuery === true })
    } catch (error) {
      const problem = toHttpProblem(error)
      context.tally.rejected()
      if (problem.code === 'INTERNAL') context.onError(error)
      // A limited address's requests: logged once per address and window, by the guard (admin/guard.ts).
      else if (problem.code !== 'TOO_MANY_ATTEMPTS') context.log(`${request.method} ${maskUrl(request.url)} → ${problem.status} ${problem.code}: ${problem.message}`)
      request.body?.cancel().catch(() => {})
      return problem.toAnswer(context.admin !== undefined && isAdminPath(path) ? ADMIN_HEADERS : corsHeaders(request))
    }
  }
}
