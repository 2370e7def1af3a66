/**
 * How secrets (write keys, shared secrets, admin tokens) appear in any output: CLI lines, DEBUG
 * lines, error messages, stats. At most their last four characters, and none of a short one.
 */
export function maskSecret(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '…'
}

/** A query parameter: its `?` or `&` and name with the `=`, then its value. */
const QUERY_PARAM = /([?&][^=&#]*=)([^&#]*)/g
/**
 * Names of query parameters that carry credentials, by rule rather than by list: any name that
 * contains one of these, in any case (`client_secret`, `api-key`, `access-token`, `jwt`,
 * `X-Amz-Signature`, `X-Amz-Credential`, `sessionId`, an Azure Functions key's `code`, …). A
 * harmless name caught too (`keyword`) only loses its value in logs.
 */
const CREDENTIAL_NAME = /token|secret|key|sig|auth|pass|credential|jwt|session|code/i
/** Names and values after which nothing of the value is shown, not even its end: an `Authorization` header's. */
const WHOLLY_SECRET_NAME = /auth/i
const AUTH_SCHEME = /^(?:bearer|basic|token)(?:\s|%20|\+)/i

const decoded = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}

/** Whether a query parameter (`name=` as written, and its value) carries a credential. */
function isCredentialParam(name: string, value: string): boolean {
  return CREDENTIAL_NAME.test(decoded(name)) || AUTH_SCHEME.test(value) || looksRandom(decoded(value))
}

/** A credential parameter's value as shown: `maskSecret`'s form, or `…` alone for an Authorization value. */
function maskParam(name: string, value: string): string {
  if (MASKED_EXACTLY.test(value)) return value
  return WHOLLY_SECRET_NAME.test(decoded(name)) || AUTH_SCHEME.test(value) ? '…' : maskSecret(value)
}
/** `scheme://user:` before a password, up to the `@` that ends the userinfo (the last one before the path). */
const USERINFO_PASSWORD = /^([a-z][a-z\d+.-]*:\/\/[^/?#@:]*:)([^/?#]*)@/i
/** A URL's `scheme://authority` (if any), its path, and the rest (`?query#fragment`). */
const URL_PARTS = /^((?:[a-z][a-z\d+.-]*:\/\/[^/?#]*)?)([^?#]*)([\s\S]*)$/i

/**
 * Where webhook services whose URL is the credential keep their token in the path, whatever it
 * looks like (Slack's may be all letters, Zapier's is 7 characters): matched against the host
 * (lower case, without userinfo and port) followed by the path, the token is the second group.
 */
const KNOWN_PATH_TOKENS = [
  // hooks.slack.com/services/T…/B…/<token>, and Workflow Builder's /workflows/… and /triggers/….
  /^(hooks\.slack\.com\/(?:services|workflows|triggers)\/(?:[^/]+\/)+)([^/]+)\/?$/,
  // discord.com/api/webhooks/<id>/<token> (also discordapp.com, canary. and ptb., /api/v10/…).
  /^((?:[a-z\d-]+\.)?discord(?:app)?\.com\/api\/(?:v\d+\/)?webhooks\/\d+\/)([^/]+)/,
  // hooks.zapier.com/hooks/catch/<account>/<hook>/
  /^(hooks\.zapier\.com\/hooks\/catch\/\d+\/)([^/]+)/,
  // hook.eu1.make.com/<token> (formerly hook.integromat.com/<token>)
  /^(hook\.(?:[a-z\d-]+\.make|integromat)\.com\/)([^/]+)/,
  // maker.ifttt.com/trigger/<event>/with/key/<key> (and …/json/with/key/<key>)
  /^(maker\.ifttt\.com\/trigger\/[^/]+\/(?:json\/)?with\/key\/)([^/]+)/,
]

/** A path segment that may be a token: 16 or more letters, digits and `-` `_` `.` `:` `=`. */
const TOKEN_SHAPED = /^[\w.:=-]{16,}$/
const kindOf = (char: string) => (char >= '0' && char <= '9' ? 0 : char >= 'a' && char <= 'z' ? 1 : 2)

/**
 * Whether a path segment looks random: token-shaped, and, without its `-` `_` `.` `:` `=`, the kind
 * of character (digit, lower-case, upper-case letter) changes at least once per four characters.
 * Random tokens, hex and UUIDs do; words (`order-events`), dates, numbers and names with a version
 * in them (`webhook-receiver-v2-2024`) do not.
 */
function looksRandom(segment: string): boolean {
  if (!TOKEN_SHAPED.test(segment)) return false
  const chars = segment.replace(/[-_.:=]/g, '')
  let changes = 0
  for (let i = 1; i < chars.length; i++) if (kindOf(chars[i]) !== kindOf(chars[i - 1])) changes++
  return changes * 4 >= chars.length
}

/** A value as `maskSecret` shows it: `…`, as written or percent-encoded (`new URL` encodes it). */
const MASKED_VALUE = /^(?:…|%E2%80%A6)/i
/** Exactly what `maskSecret` makes (`…` and at most four characters): masking it again keeps it. */
const MASKED_EXACTLY = /^(?:…|%E2%80%A6)(?:%[\da-f]{2}|[^%…]){0,4}$/i
/** What `maskSecret` makes of a random value (16 characters or more): `…` and its last four. */
const MASKED_RANDOM = /^(?:…|%E2%80%A6)(?:%[\da-f]{2}|[^%…]){4}$/i
const maskValue = (value: string) => (MASKED_EXACTLY.test(value) ? value : maskSecret(value))

/** `path` (of a URL on `authority`) with its credential segments masked. */
function maskPath(authority: string, path: string): string {
  const host = authority.replace(/^[^:]*:\/\/(?:[^@]*@)?/, '').replace(/:\d*$/, '').toLowerCase()
  for (const known of KNOWN_PATH_TOKENS) {
    const match = known.exec(host + path)
    if (!match) continue
    const at = match[1].length - host.length
    path = path.slice(0, at) + maskValue(match[2]) + path.slice(at + match[2].length)
  }
  return path.split('/').map((segment) => (looksRandom(segment) ? maskSecret(segment) : segment)).join('/')
}

/**
 * `url` with its credentials masked as `maskSecret` shows secrets (`…` and the last four
 * characters): the password of its userinfo (`postgres://user:PASSWORD@host`), the values of
 * credential query parameters (`writeKey`, `token`, `api_key`, `password`, `sig`, …), and the
 * path segments that are credentials:
 * - a known webhook service's token, wherever it is and whatever it looks like: Slack
 *   (`hooks.slack.com/services/T…/B…/<token>`), Discord (`discord.com/api/webhooks/<id>/<token>`),
 *   Zapier (`hooks.zapier.com/hooks/catch/<account>/<token>/`), Make (`hook.eu1.make.com/<token>`),
 *   IFTTT (`maker.ifttt.com/trigger/<event>/with/key/<key>`);
 * - on any host, a segment that looks random (`looksRandom`): 16 or more letters, digits and
 *   `-` `_` `.` `:` `=`, mixed so that the kind of character changes at least every fourth one.
 *   `/hook`, `/v1/webhooks/orders` and `/api/events/2024-01-01` are left as they are.
 * A value already masked stays as it is, so masking a masked URL changes nothing.
 */
export function maskUrl(url: string): string {
  const [, authority, path, rest] = URL_PARTS.exec(url)!
  return (authority + maskPath(authority, path) + rest)
    .replace(USERINFO_PASSWORD, (_, before: string, password: string) => `${before}${maskValue(password)}@`)
    .replace(QUERY_PARAM, (param: string, name: string, value: string) => (isCredentialParam(name, value) ? name + maskParam(name, value) : param))
}

/**
 * Whether `url` carries a credential as `maskUrl` shows it (`?token=…1234`, `user:…@`,
 * `/services/T…/B…/…1234`): a URL read from an admin answer, which stands for the URL it was
 * shown for, not one to send anything to.
 */
export function hasMaskedCredential(url: string): boolean {
  const password = USERINFO_PASSWORD.exec(url)?.[2]
  if (password !== undefined && MASKED_VALUE.test(password)) return true
  if (URL_PARTS.exec(url)![2].split('/').some((segment) => MASKED_VALUE.test(segment))) return true
  // Under a credential's name, any masked value; under another, a random value's masked form (`…` and four characters).
  return [...url.matchAll(QUERY_PARAM)].some(([, name, value]) => (CREDENTIAL_NAME.test(decoded(name)) ? MASKED_VALUE.test(value) : MASKED_RANDOM.test(value)))
}
