/**
 * Whether a handler serves the console and the admin endpoints, for a server adapter to warn when
 * it makes them reachable beyond this machine over plain HTTP (the admin token would cross the
 * network readable by anyone on the way).
 */
import { mark } from './marks.js'

const admins = mark<object, true>()

/** `handler` serves the console and the admin endpoints (it has an admin token). */
export const markAdmin = (handler: object) => admins.set(handler, true)
export const servesAdmin = (handler: object) => admins.get(handler) === true

/** Whether `host` (as given to `listen`) is reachable from this machine only. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  return bare === 'localhost' || bare === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bare) || /^::ffff:127(?:\.\d{1,3}){3}$/.test(bare)
}

/** The warning for an admin surface listening on `host` over plain HTTP, or `undefined` on loopback. */
export function plainHttpWarning(host: string, url: string): string | undefined {
  if (isLoopback(host)) return undefined
  return `isomorphic-analytics: the console and admin endpoints are served over plain HTTP at ${url}, reachable beyond this machine (host ${host}): the admin token crosses the network unencrypted. Put a TLS-terminating reverse proxy in front (and set \`trustProxy\`), or listen on 127.0.0.1.`
}
