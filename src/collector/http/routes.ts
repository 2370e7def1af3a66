/**
 * The collector's routes: each path it answers (the vendor's batch and single-call paths, the
 * short forms analytics.js posts to, RudderStack's beacon, analytics.js's metrics, and with an
 * admin token the admin endpoints) and what it is. ./handler.ts looks a request's path up here.
 */
import type { MessageType } from '../../message/types.js'
import type { AdminRoute } from '../admin/endpoints.js'
import type { BodyKind } from '../ingest/parse.js'

export type Route =
  /** `keyInQuery`: RudderStack's beacon form, `?writeKey=KEY`. */
  | { kind: 'ingest'; body: BodyKind; keyInQuery?: true }
  | { kind: 'metrics' }
  | { kind: 'admin'; name: AdminRoute; method?: 'GET' }

const SINGLE: Record<string, MessageType> = {
  identify: 'identify', track: 'track', page: 'page', screen: 'screen', group: 'group', alias: 'alias',
  // The short forms analytics.js posts to.
  i: 'identify', t: 'track', p: 'page', s: 'screen', g: 'group', a: 'alias',
}

export function buildRoutes(admin: boolean): Map<string, Route> {
  const routes = new Map<string, Route>([
    ['/v1/batch', { kind: 'ingest', body: 'batch' }],
    ['/v1/b', { kind: 'ingest', body: 'batch' }],
    // Where analytics-ruby (and other clients of the older API) POSTs its batches: the same body.
    ['/v1/import', { kind: 'ingest', body: 'batch' }],
    ['/beacon/v1/batch', { kind: 'ingest', body: 'batch', keyInQuery: true }],
    // analytics.js's own metrics (no write key): answered, counted, not forwarded.
    ['/v1/m', { kind: 'metrics' }],
  ])
  for (const [path, type] of Object.entries(SINGLE)) routes.set(`/v1/${path}`, { kind: 'ingest', body: type })
  if (admin) {
    routes.set('/v1/deletions', { kind: 'admin', name: 'deletions' })
    routes.set('/v1/audiences', { kind: 'admin', name: 'audiences' })
    routes.set('/v1/stats', { kind: 'admin', name: 'stats', method: 'GET' })
  }
  return routes
}

/** The admin endpoints' paths, named in a 404 when there is no admin token. */
export const ADMIN_PATHS = new Set([...buildRoutes(true)].filter(([, route]) => route.kind === 'admin').map(([path]) => path))

/**
 * A request URL's path as routed: a trailing `/`, and a doubled one, ignored (the vendor's Go, PHP
 * and .NET libraries append `/v1/batch` to an endpoint given as `http://host:8700/`, posting to
 * `//v1/batch`).
 */
export function routePath(url: string): string {
  const pathname = new URL(url).pathname
  return (pathname.includes('//') ? pathname.replace(/\/\/+/g, '/') : pathname).replace(/\/+$/, '') || '/'
}
