/**
 * CORS for browsers: every answer carries `Access-Control-Allow-Origin` (the request's origin, or
 * `*` without one), and a preflight `OPTIONS` is answered 204 with the methods and headers the
 * ingest calls use. Write keys are public by design, so any origin may send.
 */
import type { RequestHead } from './direct.js'

const ALLOW_HEADERS = 'Authorization, Content-Type, Content-Encoding'

/** A page's script may read only the safelisted answer headers; a 503's or 429's `Retry-After` is not one. */
const EXPOSE = { 'access-control-expose-headers': 'Retry-After' }

export function corsHeaders(request: RequestHead): Record<string, string> {
  const origin = request.headers.get('origin')
  if (origin === null || origin === '') return { 'access-control-allow-origin': '*', ...EXPOSE }
  return { 'access-control-allow-origin': origin, vary: 'Origin', ...EXPOSE }
}

export function preflight(request: RequestHead): Response {
  const requested = request.headers.get('access-control-request-headers')
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(request),
      'access-control-allow-methods': 'POST, OPTIONS',
      // Echo what the browser asks for on top of ours, so extra headers never fail a preflight.
      'access-control-allow-headers': requested ? `${ALLOW_HEADERS}, ${requested}` : ALLOW_HEADERS,
      'access-control-max-age': '86400',
    },
  })
}
