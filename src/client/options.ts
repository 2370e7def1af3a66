/**
 * The one place for the client's defaults and option validation. `resolveOptions` runs once, in
 * the constructor, and returns a frozen, fully populated object: nothing downstream applies
 * defaults again.
 */
import { ConfigError, type ValidationError } from '../errors.js'
import { serializeMessage } from '../message/serialize.js'
import { describe, expected, isPlainObject } from '../message/validate.js'
import type { Integrations, JsonObject } from '../message/types.js'
import type { StandardSchemaV1 } from '../message/standard-schema.js'
import type { AnyEvents, EventSchemas } from '../message/typed-calls.js'
import {
  canPersist, defaultTransport, endpointGuess, isBrowserLike, missingKeyHint, peerOptions, processHooks, readDebugSetting,
  refuseUnknownKeys,
} from '#platform'
import { BROWSER_CONTEXT_PARTS, type BrowserContextParts } from './page-context.js'
import { identityStorage, type IdentityOptions, type IdentityStorage } from './identity.js'
import type { FetchLike, Transport } from '../transport/types.js'
import { debugEnables } from '../logger.js'

/**
 * The options of `new Client(writeKey, options)`. All are optional; the defaults are in
 * {@link DEFAULTS}. An unknown option or an invalid value throws a {@link ConfigError} naming it.
 * Durations are in milliseconds.
 */
export interface ClientOptions<Events = AnyEvents> {
  /**
   * Base URL; batches go to `${endpoint}/v1/batch`. An http(s) URL without credentials, query or
   * fragment. Default `'https://api.segment.io'`.
   */
  endpoint?: string
  /**
   * Flush when this many messages are queued (batches hold at most this many); 1 sends each
   * message at once. Default 20.
   */
  flushAt?: number
  /** Go v2's name for `flushAt`; giving both with different values is a `ConfigError`. */
  size?: number
  /** Flush when this many ms have passed since the last flush. Default 5000. */
  flushAfter?: number
  /** Retries of one batch after its first attempt. Default 10. */
  maxRetries?: number
  /** ms allowed for one HTTP attempt (and for an async `schema` verdict). Default 10000. */
  timeout?: number
  /**
   * Messages held in memory at most (queued + in flight); beyond it new messages are dropped and
   * reported (a `QueueFullError` on `'error'`). Default 10000.
   */
  maxQueueSize?: number
  /** Deep-merged under every message's own `context`. */
  context?: JsonObject
  /** Default `integrations`, merged under every message's own. */
  integrations?: Integrations
  /**
   * The fetch to use. Default: on Node, `node:http` with keep-alive; elsewhere the global `fetch`
   * (looked up per request), else `cross-fetch`.
   */
  fetch?: FetchLike
  /** Send bodies gzip-compressed where the runtime has `CompressionStream`. Default `false`. */
  gzip?: boolean
  /** Force logging on or off. Default: from `DEBUG` / `localStorage.debug`. */
  debug?: boolean
  /** Batches sent at the same time, at most. Default 8. */
  maxConcurrentRequests?: number
  /** Upper bound of the first retry's (fully jittered) delay, ms. Default 100. */
  minRetryDelay?: number
  /**
   * Upper bound of any retry's delay, ms (a longer `Retry-After` is still honoured, up to 5
   * minutes). Default 30000.
   */
  maxRetryDelay?: number
  /**
   * Send `Content-Type: text/plain` with `writeKey` in the body: a CORS "simple request" with no
   * preflight. Default: on in browsers and web workers, off elsewhere.
   */
  plainText?: boolean
  /**
   * Standard Schema validators (zod, valibot, arktype…) per event name: a `track()` whose
   * properties fail is reported through `'error'` and not sent. Events without one pass as they are.
   */
  schema?: EventSchemas<Events>
  /**
   * Keep messages not yet delivered in `localStorage`, so the next page on this origin with the
   * same write key sends them after a reload, a closed tab or a crash. Default: on in browser
   * pages that have Web Locks (secure contexts: https, localhost), off elsewhere. Where
   * `localStorage` is blocked or full, one line is logged and messages are kept in memory.
   */
  persist?: boolean
  /**
   * Node, Bun and Deno: keep what is queued or in flight when the process exits (a host's
   * `process.exit`, as `next start` does on SIGTERM) in a file in `dir`, written synchronously
   * at exit, and send it from the next client made with the same `dir` and write key (once: each
   * file is claimed by one process). A relative `dir` is resolved against the working directory
   * when the client is made. Off by default; ignored in browsers (see `persist`). Without it,
   * messages still held at exit are reported as lost, never dropped silently.
   */
  spill?: { dir: string }
  /**
   * Browser pages and workers: add the page and the browser under each message's own `context`
   * (`page`: `path`, `referrer`, `search`, `title`, `url`; `userAgent`; `locale`; `timezone`;
   * `screen`), read at each call, and fill a `page()`'s `properties` from the document where the
   * caller left them out. The caller's values always win. `false` turns it off; an object turns
   * parts off (`{ screen: false }`). Default: on in browser pages and workers, off elsewhere.
   */
  browserContext?: boolean | BrowserContextParts
  /**
   * Who is using the page, for calls that do not say: an `anonymousId` made once and kept in
   * `storage` (`'localStorage'`, `'cookie'`, `'memory'`, or `'none'`: no anonymous id, nothing
   * kept, e.g. before consent); `identify()` remembers its `userId`; calls without ids get both;
   * {@link Client.reset} forgets them. Default: on in browser pages (`'localStorage'`) and browser
   * workers (`'memory'`); off elsewhere (`false`), where every call names its user. Given
   * explicitly where there is no page (a server rendering a client component), the client sends
   * nothing: the browser makes the calls again.
   */
  identity?: false | IdentityOptions
}

export interface ResolvedOptions {
  readonly writeKey: string
  readonly endpoint: string
  readonly batchUrl: string
  readonly flushAt: number
  readonly flushAfter: number
  readonly maxRetries: number
  readonly timeout: number
  readonly maxQueueSize: number
  readonly context: JsonObject | undefined
  readonly integrations: Integrations | undefined
  /** What delivery sends with: the `fetch` given, else the runtime's cheapest (the platform's `defaultTransport`). */
  readonly transport: Transport
  readonly gzip: boolean
  readonly debug: boolean
  readonly maxConcurrentRequests: number
  readonly minRetryDelay: number
  readonly maxRetryDelay: number
  readonly plainText: boolean
  readonly schema: Readonly<Record<string, StandardSchemaV1>> | undefined
  readonly persist: boolean
  /** What `browserContext` adds (undefined: nothing). */
  readonly browserContext: BrowserContextParts | undefined
  /** Where option `identity` keeps the ids (undefined: off). */
  readonly identity: IdentityStorage | undefined
  /** Where to spill at exit (option `spill`): the directory; undefined when off (and in the browser build). */
  readonly spillDir?: string
}

/**
 * The client's defaults for the {@link ClientOptions} that have a fixed one (frozen). `debug`,
 * `plainText`, `persist` and `fetch` depend on the runtime instead.
 */
export const DEFAULTS = Object.freeze({
  endpoint: 'https://api.segment.io',
  flushAt: 20,
  flushAfter: 5000,
  maxRetries: 10,
  timeout: 10_000,
  maxQueueSize: 10_000,
  gzip: false,
  maxConcurrentRequests: 8,
  minRetryDelay: 100,
  maxRetryDelay: 30_000,
})


/** Longest `Retry-After` we honour. */
export const MAX_RETRY_AFTER_MS = 300_000

const KNOWN = new Set([
  ...Object.keys(DEFAULTS),
  'size', 'context', 'integrations', 'fetch', 'debug', 'plainText', 'schema', 'persist', 'spill', 'browserContext', 'identity',
])


type IntegerOption = 'flushAt' | 'size' | 'flushAfter' | 'maxRetries' | 'timeout' | 'maxQueueSize' | 'maxConcurrentRequests' | 'minRetryDelay' | 'maxRetryDelay'

/** `input[name]`, an integer ≥ `min`, or `fallback` (by default, the option's default) when not given. */
function integer(input: ClientOptions<unknown>, name: IntegerOption, min: number, fallback = DEFAULTS[name as keyof typeof DEFAULTS] as number): number {
  const value: unknown = input[name]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw expected(ConfigError, name, `an integer ≥ ${min}`, value)
  }
  return value
}

function boolean(input: ClientOptions<unknown>, name: 'gzip' | 'debug' | 'plainText' | 'persist', fallback: boolean): boolean {
  const value: unknown = input[name]
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') {
    throw expected(ConfigError, name, 'a boolean', value)
  }
  return value
}

function object<T>(input: ClientOptions<unknown>, name: 'context' | 'integrations' | 'schema'): T | undefined {
  const value: unknown = input[name]
  if (value === undefined) return undefined
  if (!isPlainObject(value)) {
    throw expected(ConfigError, name, 'an object', value)
  }
  return Object.keys(value).length === 0 ? undefined : (value as T)
}

/**
 * A string given for `endpoint` that is not a URL, as its error shows it: without what comes up to
 * its last `@` (a userinfo) or from its first `?` or `#` (a query, a fragment), each cut marked `…`,
 * and as `…` alone when a `?` or `#` comes before an `@`: nothing then says where a password ends
 * (`https://user:pa?ss@host` does not parse).
 */
const credentialFree = (text: string) => (/[?#][^]*@/.test(text) ? '…' : text.replace(/^[^]*@|[?#][^]*/g, '…'))

/** The `endpoint` option: the default, or a base URL (no `/v1/batch`), checked. The testing kit's fake takes the same. */
export function resolveEndpoint(value: unknown): string {
  if (value === undefined) return DEFAULTS.endpoint
  let url: URL | undefined
  try {
    if (typeof value === 'string') url = new URL(value)
  } catch {
    // Not a URL: `url` stays undefined.
  }
  // `/v1/batch` is added to the path: after a query or a fragment it would be part of them.
  // Credentials have no place in it (fetch refuses them; the write key is the credential). The
  // error names only the origin of a URL (its scheme when it has none: `localhost:8700` parses as
  // a `localhost:` URL, whose origin is "null"), and of a string that is not one what
  // `credentialFree` keeps: the rest may hold a secret.
  if (!url || !/^https?:$/.test(url.protocol) || /[?#@]/.test(value as string)) {
    const got = url ? (url.origin !== 'null' ? `one for ${url.origin}` : `a \`${url.protocol}\` URL`) : describe(typeof value === 'string' ? credentialFree(value) : value)
    // With a guess at the URL meant by a host and port given without a scheme (not in the browser
    // build, for size, as it leaves out `on()`'s).
    throw new ConfigError('endpoint', `Expected \`endpoint\` to be an http(s) URL without credentials, a query or fragment, got ${got}${endpointGuess(value)}.`)
  }
  const base = (value as string).replace(/\/+$/, '')
  const given = base.replace(/\/v1\/batch$/i, '')
  if (given !== base) {
    throw new ConfigError('endpoint', `Expected \`endpoint\` to be the base URL (\`/v1/batch\` is added): pass \`'${given}'\`, not \`'${value as string}'\`.`)
  }
  return base
}

/** Each entry must implement Standard Schema v1 (`~standard.validate`); arktype's are functions. */
function schemas(input: ClientOptions<unknown>): Readonly<Record<string, StandardSchemaV1>> | undefined {
  const map = object<Record<string, unknown>>(input, 'schema')
  if (map === undefined) return undefined
  for (const [event, schema] of Object.entries(map)) {
    const standard = (schema as Partial<StandardSchemaV1> | null | undefined)?.['~standard']
    if (typeof standard?.validate !== 'function' || standard.version !== 1) {
      const option = `schema[${JSON.stringify(event)}]`
      throw expected(ConfigError, option, 'a Standard Schema v1 validator (zod, valibot, arktype…)', schema)
    }
  }
  return Object.freeze({ ...map }) as Readonly<Record<string, StandardSchemaV1>>
}

export function resolveOptions(writeKey: unknown, input: ClientOptions<unknown> = {}): ResolvedOptions {
  // The write key is a secret: a number or an object given for it is named by its kind only (a
  // string here is blank, shown as it is). So are options that are not an object: a write key
  // passed in their place would be shown.
  if (typeof writeKey !== 'string' || writeKey.trim() === '') {
    const error = expected(ConfigError, 'writeKey', 'a non-empty string', writeKey, typeof writeKey !== 'string')
    // Missing, most often an environment variable unset where a framework builds (`next build`
    // prerenders every module that makes a client). Not in the browser build, for size: a page
    // runs with the key its build gave it.
    if (missingKeyHint && (writeKey == null || writeKey === '')) error.message += ` ${missingKeyHint}`
    throw error
  }
  if (!isPlainObject(input)) {
    throw expected(ConfigError, 'options', 'an object', input, true)
  }
  // Named with a guess and the known names, as every other resolver's; the browser build names
  // the option alone, for size (as it leaves out `on()`'s guess).
  refuseUnknownKeys(input, KNOWN, '', peerOptions)
  const flushAt = integer(input, 'flushAt', 1)
  const size = integer(input, 'size', 1, flushAt)
  if (input.flushAt !== undefined && input.size !== undefined && size !== flushAt) {
    throw new ConfigError('size', `\`size\` is an alias of \`flushAt\`; got both, with different values (${size} and ${flushAt}).`)
  }
  const fetch: unknown = input.fetch
  if (fetch !== undefined && typeof fetch !== 'function') {
    throw expected(ConfigError, 'fetch', 'a function', fetch)
  }
  const minRetryDelay = integer(input, 'minRetryDelay', 0)
  const maxRetryDelay = integer(input, 'maxRetryDelay', 0)
  if (maxRetryDelay < minRetryDelay) {
    throw expected(ConfigError, 'maxRetryDelay', `≥ \`minRetryDelay\` (${minRetryDelay})`, maxRetryDelay)
  }
  const base = resolveEndpoint(input.endpoint)
  const context = object<JsonObject>(input, 'context')
  const integrations = object<Integrations>(input, 'integrations')
  // A default that cannot be sent (a Map, a cycle) would fail every call: refused here, named.
  try {
    serializeMessage({ context, integrations })
  } catch (error) {
    throw new ConfigError((error as ValidationError).field ?? 'context', (error as Error).message)
  }
  return Object.freeze({
    writeKey,
    endpoint: base,
    batchUrl: `${base}/v1/batch`,
    flushAt: size,
    flushAfter: integer(input, 'flushAfter', 1),
    maxRetries: integer(input, 'maxRetries', 0),
    timeout: integer(input, 'timeout', 1),
    maxQueueSize: integer(input, 'maxQueueSize', 1),
    context,
    integrations,
    transport: fetch === undefined ? defaultTransport() : (fetch as Transport),
    gzip: boolean(input, 'gzip', DEFAULTS.gzip),
    debug: boolean(input, 'debug', debugEnables(readDebugSetting(), 'analytics:client')),
    maxConcurrentRequests: integer(input, 'maxConcurrentRequests', 1),
    minRetryDelay,
    maxRetryDelay,
    plainText: boolean(input, 'plainText', isBrowserLike()),
    schema: schemas(input),
    persist: boolean(input, 'persist', canPersist()),
    browserContext: browserContextParts(input.browserContext),
    identity: identityStorage(input.identity, isBrowserLike()),
    // (Server runtimes only: elsewhere there is no file system, and it is ignored.)
    ...(processHooks && { spillDir: spillDir(input.spill, processHooks.spillDir) }),
  })
}

/** Option `browserContext`: the parts to add, or undefined for none. */
function browserContextParts(value: unknown): BrowserContextParts | undefined {
  if (value === undefined) return isBrowserLike() ? {} : undefined
  if (value === true || value === false) return value ? {} : undefined
  if (!isPlainObject(value)) throw expected(ConfigError, 'browserContext', 'a boolean or an object of booleans', value)
  for (const [part, on] of Object.entries(value)) {
    if (!(BROWSER_CONTEXT_PARTS as readonly string[]).includes(part)) throw new ConfigError(`browserContext.${part}`, `Unknown option \`browserContext.${part}\`; known: ${BROWSER_CONTEXT_PARTS.join(', ')}.`)
    if (typeof on !== 'boolean') throw expected(ConfigError, `browserContext.${part}`, 'a boolean', on)
  }
  return Object.freeze({ ...value })
}

/** Option `spill`: `{ dir }`, a non-empty path (made absolute against the working directory). */
function spillDir(value: unknown, absolutePath: (dir: string) => string): string | undefined {
  if (value === undefined) return undefined
  if (!isPlainObject(value)) throw expected(ConfigError, 'spill', 'an object like `{ dir: string }`', value)
  refuseUnknownKeys(value, new Set(['dir']), 'spill')
  const { dir } = value as { dir?: unknown }
  if (typeof dir !== 'string' || dir.trim() === '') throw expected(ConfigError, 'spill.dir', 'a non-empty directory path', dir)
  return absolutePath(dir)
}
