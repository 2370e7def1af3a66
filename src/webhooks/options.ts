/**
 * `WebhookDestination` options: the one defaults object, validation with errors that name the
 * option and the value, and the per-URL header sets built once.
 */
import { refuseUnknownKeys } from '../closest.js'
import { ConfigError } from '../errors.js'
import { describe, isPlainObject } from '../message/validate.js'
import { platformTransport, transportOf, type FetchLike, type Transport } from '../platform/transport.js'
import type { BackoffOptions } from '../transport/retry-policy.js'
import { maskUrl } from '../secrets.js'
import { describeSecret, SIGNATURE_HEADER } from './signature.js'
import { standardKeys, STANDARD_ID_HEADER, STANDARD_SIGNATURE_HEADER, STANDARD_TIMESTAMP_HEADER } from './standard.js'

/** The `User-Agent` every forwarded request carries (`<vendor token>/1.0`, as the original destination sends). */
export const WEBHOOK_USER_AGENT = 'IsomorphicAnalytics-Webhooks/1.0'
/** At most this many URLs per destination, as in the original destination. */
export const MAX_WEBHOOK_URLS = 5

/** The defaults of {@link WebhookDestinationOptions} (frozen): `timeout`, `retryWindow`, `backoff`, in ms. */
export const WEBHOOK_DEFAULTS = Object.freeze({
  /** ms allowed for one request to answer (5 seconds). */
  timeout: 5_000,
  /** ms after the first attempt after which no retry starts (4 hours). */
  retryWindow: 14_400_000,
  /** Full-jitter exponential backoff: retry n waits a uniform [0, min(capMs, baseMs·2^(n-1))). */
  backoff: Object.freeze({ baseMs: 1_000, capMs: 600_000 }),
})

/** One receiver of a {@link WebhookDestination}: its URL and the static headers sent to it. */
export interface WebhookUrl {
  /** Full http(s) URL, without credentials; each URL once per destination. */
  url: string
  /**
   * Static headers added to every request to this URL (not `User-Agent`, `Content-Type`,
   * `X-Signature`, nor headers the connection owns such as `Host`). Never shown unmasked.
   */
  headers?: Record<string, string>
}

/**
 * The options of `new WebhookDestination(options)`. Only `urls` is required. An unknown option (at
 * the top, in `backoff` or in a URL entry), a bad URL or header, or an invalid number or function
 * throws a `ConfigError` naming it.
 */
export interface WebhookDestinationOptions {
  /** 1 to 5 receivers; each message is POSTed to all of them in parallel. */
  urls: readonly WebhookUrl[]
  /** When set, every request carries `X-Signature`, the HMAC-SHA1 of its body under this secret. */
  sharedSecret?: string
  /**
   * One or two `whsec_…` secrets (two during a rotation): every request also carries the
   * Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature`.
   */
  standardSecrets?: readonly string[]
  /** ms allowed for one request to answer. Default 5000. */
  timeout?: number
  /** ms after the first attempt during which retries may start. Default 14,400,000 (4 h); 0: no retries. */
  retryWindow?: number
  /**
   * The fetch to use. Default: on Node, `node:http(s)` with keep-alive (several times cheaper per
   * request than Node's global fetch); elsewhere the global `fetch`, looked up at call time.
   */
  fetch?: FetchLike
  /**
   * The retry schedule: retry n waits a uniform random delay in [0, min(`capMs`, `baseMs`·2^(n−1))),
   * at least any `Retry-After`. Default `{ baseMs: 1000, capMs: 600000 }`; tests shrink it.
   */
  backoff?: Partial<BackoffOptions>
  /** Clock for the retry window (ms). Default `Date.now`. */
  now?: () => number
  /** Source of jitter in [0, 1). Default `Math.random`. */
  random?: () => number
}

export interface ResolvedTarget {
  readonly url: string
  /** Static headers plus User-Agent and Content-Type; X-Signature is added per message. */
  readonly headers: Readonly<Record<string, string>>
}

export interface ResolvedDestinationOptions {
  readonly targets: readonly ResolvedTarget[]
  readonly sharedSecret: string | undefined
  /** The keys the `standardSecrets` encode, when set. */
  readonly standardKeys: readonly Uint8Array[] | undefined
  readonly timeout: number
  readonly retryWindow: number
  /** The `fetch` option, or the transport it is built on (`nodeFetch`: `nodeRequest`). */
  readonly fetch: Transport
  readonly backoff: BackoffOptions
  readonly now: () => number
  readonly random: () => number
}

/** The option names, so a typo (`sharedsecret`, `timout`) cannot silently turn a feature off. */
const KNOWN = new Set(['urls', 'sharedSecret', 'standardSecrets', 'timeout', 'retryWindow', 'fetch', 'backoff', 'now', 'random'])
const KNOWN_BACKOFF = new Set(['baseMs', 'capMs'])
const KNOWN_URL = new Set(['url', 'headers'])

/** RFC 9110 §5.6.2 `token`. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** RFC 9110 §5.5 field value, restricted to ASCII: visible characters, space and tab. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/
const CONTROL_NAMES: Record<number, string> = { 0x0: 'NUL', 0xa: 'LF', 0xd: 'CR', 0x7f: 'DEL' }

/** `U+2026 (…), not ASCII` / `U+000D (CR), a control character`. */
function describeChar(char: string): string {
  const code = char.codePointAt(0)!
  const hex = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  return code < 0x20 || code === 0x7f ? `${hex}${CONTROL_NAMES[code] ? ` (${CONTROL_NAMES[code]})` : ''}, a control character` : `${hex} (${char}), not ASCII`
}
/** Set by the destination itself; a static header may not replace them. */
const RESERVED = new Set(['user-agent', 'content-type', SIGNATURE_HEADER.toLowerCase(), STANDARD_ID_HEADER, STANDARD_TIMESTAMP_HEADER, STANDARD_SIGNATURE_HEADER])
/**
 * Owned by the connection and the body's framing (hop-by-hop, RFC 9110 §7.6.1; or saying how the
 * body is sent: a `Content-Encoding: gzip` on a plain body is a lie): setting one would break the
 * request, confuse the receiver or a proxy on the way (`Upgrade`, `Expect`, `Proxy-*`).
 */
const TRANSPORT = new Set(['content-length', 'host', 'transfer-encoding', 'connection', 'upgrade', 'te', 'expect', 'content-encoding', 'keep-alive', 'trailer'])
const PROXY_HEADER = /^proxy-/

/** Sizes of what a destination keeps and sends with every delivery (a 400 KB URL once took 80 MB of log for 100 events). */
export const WEBHOOK_LIMITS = Object.freeze({ urlLength: 4_096, headers: 20, headerValueLength: 4_096, secretLength: 1_024 })

function positiveInteger(option: string, value: unknown, fallback: number, min: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new ConfigError(option, `Expected \`${option}\` to be an integer ≥ ${min}, got ${describe(value)}.`)
  }
  return value
}

function fn<T>(option: string, value: unknown, fallback: T): T {
  if (value === undefined) return fallback
  if (typeof value !== 'function') {
    throw new ConfigError(option, `Expected \`${option}\` to be a function, got ${describe(value)}.`)
  }
  return value as T
}

function resolveUrl(option: string, value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw new ConfigError(option, `Expected \`${option}\` to be an http(s) URL string, got ${describe(value)}.`)
  }
  if (value.length > WEBHOOK_LIMITS.urlLength) {
    throw new ConfigError(option, `Expected \`${option}\` to be at most ${WEBHOOK_LIMITS.urlLength} characters long, got ${value.length}.`)
  }
  let parsed: URL
  try {
    parsed = new URL(value)
  } catch {
    throw new ConfigError(option, `Expected \`${option}\` to be an absolute http(s) URL, got ${describe(maskUrl(value))}.`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    // Masked: a webhook URL may carry a credential (`?token=…`).
    throw new ConfigError(option, `Expected \`${option}\` to use http or https, got \`${parsed.protocol}\` in ${describe(maskUrl(value))}.`)
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // fetch refuses such URLs; that would otherwise surface as a retried network error.
    throw new ConfigError(option, `Expected \`${option}\` to carry no credentials; send them in a static header instead.`)
  }
  return value
}

function resolveHeaders(option: string, value: unknown): Record<string, string> {
  if (value === undefined) return {}
  if (!isPlainObject(value)) {
    throw new ConfigError(option, `Expected \`${option}\` to be an object of header names to values, got ${describe(value)}.`)
  }
  const headers: Record<string, string> = {}
  const seen = new Set<string>()
  const entries = Object.entries(value)
  if (entries.length > WEBHOOK_LIMITS.headers) {
    throw new ConfigError(option, `Expected \`${option}\` to hold at most ${WEBHOOK_LIMITS.headers} headers, got ${entries.length}.`)
  }
  for (const [name, headerValue] of entries) {
    const where = `${option}[${JSON.stringify(name)}]`
    if (!TOKEN.test(name)) {
      throw new ConfigError(option, `Expected header name ${describe(name)} in \`${option}\` to be an RFC 9110 token (ASCII letters, digits and !#$%&'*+-.^_\`|~; no spaces, colons, CR or LF).`)
    }
    const lower = name.toLowerCase()
    // Kept as the prototype of a plain object: shown as saved, never sent.
    if (lower === '__proto__') throw new ConfigError(option, `Header \`${name}\` in \`${option}\` is not a header name a receiver would get; remove it.`)
    if (RESERVED.has(lower)) {
      throw new ConfigError(option, `Header \`${name}\` in \`${option}\` is set by the destination (User-Agent, Content-Type, X-Signature, webhook-id, webhook-timestamp, webhook-signature) and may not be overridden.`)
    }
    if (TRANSPORT.has(lower) || PROXY_HEADER.test(lower)) {
      throw new ConfigError(option, `Header \`${name}\` in \`${option}\` is managed by the HTTP connection (hop-by-hop, body framing or a proxy's) and may not be set.`)
    }
    if (seen.has(lower)) {
      throw new ConfigError(option, `Header \`${name}\` appears twice in \`${option}\` (names are case-insensitive).`)
    }
    seen.add(lower)
    if (typeof headerValue !== 'string') {
      throw new ConfigError(option, `Expected \`${where}\` to be a string, got ${describeSecret(headerValue)}.`)
    }
    if (headerValue.length > WEBHOOK_LIMITS.headerValueLength) {
      throw new ConfigError(option, `Expected \`${where}\` to be at most ${WEBHOOK_LIMITS.headerValueLength} characters long, got ${headerValue.length}. (The value is not shown: it may be a credential.)`)
    }
    if (!FIELD_VALUE.test(headerValue)) {
      // Header values are often credentials (`Authorization`): say where the bad character is, not the value.
      const chars = [...headerValue]
      const at = chars.findIndex((c) => !FIELD_VALUE.test(c))
      throw new ConfigError(option, `Expected \`${where}\` to hold only visible ASCII characters, spaces and tabs; its character ${at + 1} is ${describeChar(chars[at])}. (The value is not shown: it may be a credential.)`)
    }
    headers[name] = headerValue.trim()
  }
  return headers
}

function resolveTargets(value: unknown): ResolvedTarget[] {
  if (!Array.isArray(value) || value.length < 1 || value.length > MAX_WEBHOOK_URLS) {
    const got = Array.isArray(value) ? `${value.length} URLs` : describe(value)
    throw new ConfigError('urls', `Expected \`urls\` to be an array of 1 to ${MAX_WEBHOOK_URLS} entries, got ${got}.`)
  }
  // A URL given twice would get every message twice. Compared as parsed (`HTTPS://H.test/a` is
  // `https://h.test/a`) and without its fragment, which is never sent (`/hook#a` is `/hook`); the
  // URL is not repeated in the message (it may carry a `?token=`).
  const seen = new Map<string, number>()
  return value.map((entry: unknown, i): ResolvedTarget => {
    if (!isPlainObject(entry)) {
      throw new ConfigError(`urls[${i}]`, `Expected \`urls[${i}]\` to be an object { url, headers? }, got ${describe(entry)}.`)
    }
    refuseUnknownKeys(entry, KNOWN_URL, `urls[${i}]`)
    const url = resolveUrl(`urls[${i}].url`, entry.url)
    const parsed = new URL(url)
    parsed.hash = ''
    const { href } = parsed
    const first = seen.get(href)
    if (first !== undefined) throw new ConfigError(`urls[${i}].url`, `\`urls[${i}].url\` repeats \`urls[${first}].url\`; each URL may be given once.`)
    seen.set(href, i)
    const headers = resolveHeaders(`urls[${i}].headers`, entry.headers)
    return Object.freeze({
      url,
      headers: Object.freeze({ ...headers, 'User-Agent': WEBHOOK_USER_AGENT, 'Content-Type': 'application/json' }),
    })
  })
}

/** Validates and normalises the options once; the result is frozen and fully populated. */
export function resolveDestinationOptions(input: unknown): ResolvedDestinationOptions {
  if (!isPlainObject(input)) {
    throw new ConfigError('options', `Expected the WebhookDestination options to be an object, got ${describe(input)}.`)
  }
  refuseUnknownKeys(input, KNOWN, '')
  const options = input as Partial<WebhookDestinationOptions>
  const { sharedSecret } = options
  if (sharedSecret !== undefined && (typeof sharedSecret !== 'string' || sharedSecret === '')) {
    throw new ConfigError('sharedSecret', `Expected \`sharedSecret\` to be a non-empty string, got ${describeSecret(sharedSecret)}.`)
  }
  if (sharedSecret !== undefined && sharedSecret.length > WEBHOOK_LIMITS.secretLength) {
    throw new ConfigError('sharedSecret', `Expected \`sharedSecret\` to be at most ${WEBHOOK_LIMITS.secretLength} characters long, got ${sharedSecret.length}. (The value is not shown: it is a credential.)`)
  }
  if (options.backoff !== undefined && !isPlainObject(options.backoff)) {
    throw new ConfigError('backoff', `Expected \`backoff\` to be an object { baseMs?, capMs? }, got ${describe(options.backoff)}.`)
  }
  if (options.backoff !== undefined) refuseUnknownKeys(options.backoff, KNOWN_BACKOFF, 'backoff')
  const baseMs = positiveInteger('backoff.baseMs', options.backoff?.baseMs, WEBHOOK_DEFAULTS.backoff.baseMs, 1)
  const capMs = positiveInteger('backoff.capMs', options.backoff?.capMs, WEBHOOK_DEFAULTS.backoff.capMs, 1)
  if (capMs < baseMs) {
    throw new ConfigError('backoff.capMs', `Expected \`backoff.capMs\` to be ≥ \`backoff.baseMs\` (${baseMs}), got \`${capMs}\`.`)
  }
  const fetch = fn<FetchLike | undefined>('fetch', options.fetch, undefined)
  return Object.freeze({
    targets: Object.freeze(resolveTargets(options.urls)),
    sharedSecret,
    standardKeys: options.standardSecrets === undefined ? undefined : Object.freeze(standardKeys('standardSecrets', options.standardSecrets)),
    timeout: positiveInteger('timeout', options.timeout, WEBHOOK_DEFAULTS.timeout, 1),
    retryWindow: positiveInteger('retryWindow', options.retryWindow, WEBHOOK_DEFAULTS.retryWindow, 0),
    fetch: fetch === undefined ? platformTransport() : transportOf(fetch),
    backoff: Object.freeze({ baseMs, capMs }),
    now: fn('now', options.now, () => Date.now()),
    random: fn('random', options.random, Math.random),
  })
}
