/**
 * The collector's configuration: one resolver, run once, that validates everything up front
 * (a `ConfigError` naming the option and the problem) and returns a frozen, fully-populated
 * object. Nothing downstream applies defaults again.
 */
import { ConfigError } from '../errors.js'
import { refuseUnknownKeys } from '../closest.js'
import { expected, isPlainObject } from '../message/validate.js'
import type { FetchLike } from '../platform/transport.js'
import type { SettingsStore } from './console/settings-store.js'
import type { SourceWebhooksConfig, WebhookUrlConfig } from './webhooks-config.js'
import { compileTrackingPlan, type TrackingPlan, type TrackingPlanConfig } from './ingest/tracking-plan.js'
import { resolveQueue, type QueueServer } from './queue-server.js'
import { guardReport } from './guard-report.js'
import { describeSecret } from '../webhooks/signature.js'

// The queue server's URL option is ./queue-server.ts; the state and delivery modules import these from here.
export { redisDatabase, type QueueServer } from './queue-server.js'

export type { SourceWebhooksConfig, WebhookUrlConfig } from './webhooks-config.js'

/** One source: a write key that clients send with, and where its messages go. */
export interface SourceConfig {
  /** The key clients authenticate with (the `Client`'s `writeKey`); unique among sources. */
  writeKey: string
  /** Names the source in deletion requests, audience syncs, the console and logs; unique among sources. */
  name: string
  /** Forward this source's messages to webhook URLs. */
  webhooks?: SourceWebhooksConfig
  /** JSON Schemas per track event, and what to do with unplanned events and violations. */
  trackingPlan?: TrackingPlanConfig
}

/**
 * The configuration of {@link createCollector}, checked when it is called: any problem, an unknown
 * option included, throws a `ConfigError` whose `option` names it (`sources[0].webhooks.urls[2].url`).
 */
export interface CollectorConfig {
  /** One or more sources; write keys and names must be unique. */
  sources: SourceConfig[]
  /**
   * Enables the console (`GET /console`) and the admin endpoints (`POST /v1/deletions`,
   * `POST /v1/audiences`, `GET /v1/stats`, `/v1/admin/…`), sent as `Authorization: Bearer <token>`:
   * visible ASCII, no spaces, at least 16 characters, not one character repeated.
   */
  adminToken?: string
  /** Accepts an `adminToken` shorter than 16 characters. For tests only: such a token can be guessed. */
  unsafeShortAdminToken?: boolean
  /**
   * Behind a reverse proxy: the client address that wrong admin tokens are counted under is the
   * last one in `X-Forwarded-For` (the one the proxy appended). Default `false`: the socket's peer.
   */
  trustProxy?: boolean
  /**
   * Lets webhook URLs set through the console or the admin API reach loopback, private,
   * link-local, carrier-grade NAT and unique-local addresses (local development). Default
   * `false`. URLs in `sources` are trusted either way.
   */
  allowPrivateWebhookUrls?: boolean
  /** fetch used to deliver webhooks (default: the global fetch, looked up at call time). */
  fetch?: FetchLike
  /** ms that `close()` waits for deliveries in flight by default (10000). */
  drainTimeout?: number
  /**
   * ms forwarded payloads are kept for replay (`POST /v1/admin/replay`), from when each was
   * accepted (86400000: 24 hours). In memory, within the latest 10,000 payloads (64 MiB of
   * bodies); with a `queue`, in the queue server. Kept only with an `adminToken`.
   */
  retention?: number
  /** Deliveries in flight at once, per source (64). */
  deliveryConcurrency?: number
  /** Deliveries waiting or in flight per source before ingest answers 503 (10000). */
  maxPendingDeliveries?: number
  /**
   * A queue server for deliveries, through BullMQ: `redis://` / `rediss://` or `postgres://` /
   * `postgresql://`. Deliveries then survive the process and are shared by every collector on
   * that server. Default: this process's memory.
   */
  queue?: string
  /** Force logging on or off (default: `DEBUG=analytics`). */
  debug?: boolean
  /**
   * Called with every unexpected error (answered 500) and every failure in the background. Default:
   * `console.error`. What it throws is printed with the error (`console.error`), never thrown on.
   */
  onError?: (error: unknown) => void
  /**
   * Where Webhooks settings changed in the console are kept. Default: the `queue` server when
   * there is one (shared by every collector on it), else this process's memory (the CLI's
   * `--config FILE` writes them back to that file when there is no queue server).
   */
  settings?: SettingsStore
  /**
   * ms of nothing but failed attempts after which a webhook URL is disabled (no more attempts; its
   * messages kept as failed; one report to `onError`) until enabled again (console, or
   * `POST /v1/admin/endpoints/enable`). Default 86,400,000 (24 hours); `0`: never.
   */
  disableAfter?: number
}

export interface ResolvedWebhooks {
  urls: WebhookUrlConfig[]
  sharedSecret?: string
  standardSecrets?: string[]
  timeout?: number
  retryWindow?: number
}

export interface ResolvedSource {
  writeKey: string
  name: string
  /** `undefined` when the source has no enabled Webhooks destination. */
  webhooks: ResolvedWebhooks | undefined
  /** `webhooks` as configured (a disabled destination keeps its URLs), for the console. */
  configured?: SourceWebhooksConfig
  /** The source's tracking plan, compiled; `undefined` without one. */
  trackingPlan?: TrackingPlan
}

export interface ResolvedConfig {
  sources: readonly ResolvedSource[]
  adminToken: string | undefined
  trustProxy: boolean
  allowPrivateWebhookUrls: boolean
  fetch: FetchLike | undefined
  drainTimeout: number
  retention: number
  deliveryConcurrency: number
  maxPendingDeliveries: number
  queue: QueueServer | undefined
  debug: boolean | undefined
  /** The `onError` option, guarded: it never throws (`guardReport`). */
  onError: (error: unknown) => void
  /** `undefined`: the default (the queue server's store, or memory). */
  settings: SettingsStore | undefined
  disableAfter: number
}

/** The defaults. The README's collector options table is checked against this object by a test. */
export const COLLECTOR_DEFAULTS = {
  drainTimeout: 10_000,
  retention: 86_400_000,
  unsafeShortAdminToken: false,
  trustProxy: false,
  allowPrivateWebhookUrls: false,
  deliveryConcurrency: 64,
  maxPendingDeliveries: 10_000,
  disableAfter: 86_400_000,
  onError: (error: unknown) => console.error('isomorphic-analytics collector: unexpected error', error),
} as const

const CONFIG_KEYS = new Set([
  'sources', 'adminToken', 'unsafeShortAdminToken', 'trustProxy', 'allowPrivateWebhookUrls', 'fetch', 'drainTimeout', 'retention', 'deliveryConcurrency', 'maxPendingDeliveries', 'queue', 'debug', 'onError', 'settings',
  'disableAfter',
])
const SOURCE_KEYS = new Set(['writeKey', 'name', 'webhooks', 'trackingPlan'])
const WEBHOOK_KEYS = new Set(['enabled', 'urls', 'sharedSecret', 'standardSecrets', 'timeout', 'retryWindow'])
const URL_KEYS = new Set(['url', 'headers'])

/** `secret`: the value may be a credential (a write key, the admin token), shown as `describeSecret` does. */
function fail(option: string, expectation: string, value: unknown, secret = false): never {
  if (secret) throw new ConfigError(option, `Expected \`${option}\` to be ${expectation}, got ${describeSecret(value)}.`)
  throw expected(ConfigError, option, expectation, value)
}

const nonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

function optionalInteger(value: unknown, option: string, min: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) fail(option, `an integer ≥ ${min}`, value)
  return value
}

/**
 * The shape of a source's `webhooks`. The URL, header, secret and timing rules are the
 * destination's own (one implementation): `createCollector` builds each `WebhookDestination` up
 * front and re-throws its `ConfigError` under the source's path.
 */
function resolveWebhooks(input: unknown, at: string): ResolvedWebhooks | undefined {
  if (input === undefined) return undefined
  if (!isPlainObject(input)) fail(at, 'an object { enabled?, urls, sharedSecret? }', input)
  refuseUnknownKeys(input, WEBHOOK_KEYS, at)
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') fail(`${at}.enabled`, 'a boolean', input.enabled)
  const urls = input.urls ?? []
  if (!Array.isArray(urls)) fail(`${at}.urls`, 'an array of { url, headers? }', urls)
  urls.forEach((entry: unknown, i) => {
    if (!isPlainObject(entry)) fail(`${at}.urls[${i}]`, 'an object { url, headers? }', entry)
    refuseUnknownKeys(entry, URL_KEYS, `${at}.urls[${i}]`)
  })
  const enabled = input.enabled ?? urls.length > 0
  if (!enabled) return undefined
  // Missing or `[]`, said as such (`describe` calls every array "an array").
  if (urls.length === 0) {
    throw new ConfigError(`${at}.urls`, `Expected \`${at}.urls\` to hold at least one URL when the destination is enabled, got ${input.urls === undefined ? '`undefined`' : '`[]`'}.`)
  }
  return {
    urls: urls as WebhookUrlConfig[],
    ...(input.sharedSecret !== undefined && { sharedSecret: input.sharedSecret as string }),
    ...(input.standardSecrets !== undefined && { standardSecrets: input.standardSecrets as string[] }),
    ...(input.timeout !== undefined && { timeout: input.timeout as number }),
    ...(input.retryWindow !== undefined && { retryWindow: input.retryWindow as number }),
  }
}

function resolveSource(input: unknown, i: number): ResolvedSource {
  const at = `sources[${i}]`
  if (!isPlainObject(input)) fail(at, 'an object { writeKey, name, webhooks? }', input)
  refuseUnknownKeys(input, SOURCE_KEYS, at)
  if (!nonEmptyString(input.writeKey)) fail(`${at}.writeKey`, 'a non-empty string', input.writeKey, true)
  if (!nonEmptyString(input.name)) fail(`${at}.name`, 'a non-empty string', input.name)
  return {
    writeKey: input.writeKey,
    name: input.name,
    webhooks: resolveSourceWebhooks(input.webhooks, i),
    ...(input.webhooks !== undefined && { configured: input.webhooks as SourceWebhooksConfig }),
    trackingPlan: compileTrackingPlan(input.trackingPlan, `${at}.trackingPlan`),
  }
}

/** A source's `webhooks`, checked as `sources[index].webhooks` of the config (the console's changes too). */
export function resolveSourceWebhooks(input: unknown, index: number): ResolvedWebhooks | undefined {
  return resolveWebhooks(input, `sources[${index}].webhooks`)
}

/** What `Authorization: Bearer <token>` can carry byte for byte from every client: visible ASCII, no spaces. */
const BEARER_TOKEN = /^[\x21-\x7e]+$/

/**
 * The admin token travels as `Authorization: Bearer <token>`. A space ends the token there, and a
 * character outside ASCII is refused by browsers (fetch) or sent in another encoding by curl
 * (UTF-8) than by Chromium (Latin-1): such a token would start, then never sign in. The value is
 * never shown: it is a credential.
 */
function checkAdminToken(token: unknown, unsafeShort: boolean): void {
  if (!nonEmptyString(token)) fail('adminToken', 'a non-empty string', token, true)
  if (BEARER_TOKEN.test(token)) return checkStrength(token, unsafeShort)
  const chars = [...token]
  const at = chars.findIndex((c) => !BEARER_TOKEN.test(c))
  const code = chars[at].codePointAt(0)!
  const what = /\s/.test(chars[at]) ? 'a space or other whitespace' : code < 0x20 || code === 0x7f ? 'a control character' : 'not ASCII'
  throw new ConfigError('adminToken', `Expected \`adminToken\` to hold only visible ASCII characters (no spaces), as \`Authorization: Bearer <token>\` carries them; its character ${at + 1} is ${what}. (The value is not shown: it is a credential.)`)
}

/** The shortest admin token accepted (without `unsafeShortAdminToken`). */
export const MIN_ADMIN_TOKEN_LENGTH = 16

/** A token that can be guessed is refused: too short, or one character repeated. */
function checkStrength(token: string, unsafeShort: boolean): void {
  if (unsafeShort) return
  const length = [...token].length
  const advice = 'Make one with `openssl rand -hex 32`. (The value is not shown: it is a credential.)'
  if (length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new ConfigError('adminToken', `Expected \`adminToken\` to be at least ${MIN_ADMIN_TOKEN_LENGTH} characters long, got ${length}: a short token can be guessed. ${advice}`)
  }
  if (new Set(token).size === 1) {
    throw new ConfigError('adminToken', `Expected \`adminToken\` to be random, got one character repeated ${length} times. ${advice}`)
  }
}

function optionalBoolean(value: unknown, option: string): boolean {
  if (value !== undefined && typeof value !== 'boolean') fail(option, 'a boolean', value)
  return value === true
}

function resolveSettingsStore(input: unknown): SettingsStore | undefined {
  if (input === undefined) return undefined
  const store = (typeof input === 'object' && input !== null ? input : {}) as Partial<SettingsStore>
  const optional = (f: unknown) => f === undefined || typeof f === 'function'
  if (
    typeof store.save !== 'function' || !optional(store.load) || !optional(store.watch) || !optional(store.saveIf) ||
    typeof store.durable !== 'boolean' || !['memory', 'file', 'queue'].includes(store.kind as string)
  ) {
    fail('settings', "a settings store { kind: 'memory' | 'file' | 'queue', durable, save, load?, watch?, saveIf? }", input)
  }
  return store as SettingsStore
}

export function resolveConfig(input: CollectorConfig): ResolvedConfig {
  if (!isPlainObject(input)) fail('config', 'an object { sources, adminToken? }', input)
  refuseUnknownKeys(input, CONFIG_KEYS, '')
  const { sources } = input
  if (!Array.isArray(sources) || sources.length === 0) fail('sources', 'a non-empty array of sources', sources)
  const resolved = sources.map(resolveSource)
  for (const field of ['writeKey', 'name'] as const) {
    const seen = new Map<string, number>()
    resolved.forEach((source, i) => {
      const first = seen.get(source[field])
      if (first !== undefined) {
        throw new ConfigError(`sources[${i}].${field}`, `\`sources[${i}].${field}\` repeats the ${field} of \`sources[${first}]\`; each source needs its own.`)
      }
      seen.set(source[field], i)
    })
  }
  const unsafeShort = optionalBoolean(input.unsafeShortAdminToken, 'unsafeShortAdminToken')
  if (input.adminToken !== undefined) checkAdminToken(input.adminToken, unsafeShort)
  if (input.fetch !== undefined && typeof input.fetch !== 'function') fail('fetch', 'a function', input.fetch)
  if (input.onError !== undefined && typeof input.onError !== 'function') fail('onError', 'a function', input.onError)
  if (input.debug !== undefined && typeof input.debug !== 'boolean') fail('debug', 'a boolean', input.debug)
  return Object.freeze({
    sources: Object.freeze(resolved.map((s) => Object.freeze(s))),
    adminToken: input.adminToken,
    trustProxy: optionalBoolean(input.trustProxy, 'trustProxy'),
    allowPrivateWebhookUrls: optionalBoolean(input.allowPrivateWebhookUrls, 'allowPrivateWebhookUrls'),
    fetch: input.fetch,
    drainTimeout: optionalInteger(input.drainTimeout, 'drainTimeout', 0, COLLECTOR_DEFAULTS.drainTimeout),
    retention: optionalInteger(input.retention, 'retention', 0, COLLECTOR_DEFAULTS.retention),
    deliveryConcurrency: optionalInteger(input.deliveryConcurrency, 'deliveryConcurrency', 1, COLLECTOR_DEFAULTS.deliveryConcurrency),
    maxPendingDeliveries: optionalInteger(input.maxPendingDeliveries, 'maxPendingDeliveries', 1, COLLECTOR_DEFAULTS.maxPendingDeliveries),
    queue: resolveQueue(input.queue),
    debug: input.debug,
    onError: guardReport(input.onError ?? COLLECTOR_DEFAULTS.onError, 'collector'),
    settings: resolveSettingsStore(input.settings),
    disableAfter: optionalInteger(input.disableAfter, 'disableAfter', 0, COLLECTOR_DEFAULTS.disableAfter),
  })
}
