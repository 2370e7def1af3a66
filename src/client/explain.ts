/**
 * Explanations the client's errors and debug lines add on servers and in workers (the browser
 * build leaves them out for size: ../platform/browser.ts).
 */

/** What a missing write key's error adds: how to make the client where the key may be unset. */
export const MISSING_KEY_HINT = 'Is its environment variable unset here? A build (`next build` prerenders every module) often runs without it: make the client on first use, not as the module loads: `let client; const analytics = () => (client ??= new Client(process.env.WRITE_KEY))`.'

/** A `host:port` (a path may follow) given without a scheme: `new URL` reads `localhost:` as one. */
const SCHEMELESS = /^[\w.-]+:\d+(?:\/[\w./-]*)?$/

/** ` (did you mean …?)` with the `http://` base URL meant by a host and port given without a scheme, else `''`. */
export function endpointGuess(value: unknown): string {
  if (typeof value !== 'string' || !SCHEMELESS.test(value)) return ''
  return ` (did you mean \`'http://${value.replace(/\/+$/, '').replace(/\/v1\/batch$/i, '')}'\`?)`
}

/**
 * Other libraries' names for our options, guessed from: `host` (Segment's and
 * PostHog's Node SDKs), `dataPlaneUrl` (RudderStack's), `apiHost`, `flushInterval`.
 */
export const PEER_OPTIONS: Readonly<Record<string, string>> = { host: 'endpoint', dataPlaneUrl: 'endpoint', apiHost: 'endpoint', url: 'endpoint', flushInterval: 'flushAfter', maxEventsInBatch: 'flushAt' }

/** A detail of a debug line (the webhooks' and the collector's): a string as it is, an error by its name and message, else JSON. */
export function formatDetail(value: unknown): string {
  if (typeof value === 'string') return value
  if (value instanceof Error) return `${value.name}: ${value.message}`
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}
