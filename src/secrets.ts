/**
 * How secrets (write keys, shared secrets, admin tokens) appear in any output: CLI lines, DEBUG
 * lines, error messages, stats. At most their last four characters, and none of a short one.
 */
export function maskSecret(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '…'
}

/**
 * Query parameters that carry credentials: write keys, tokens, API keys, secrets, passwords,
 * signatures, and `code` and `auth` (an Azure Functions webhook's key is its `?code=`).
 */
const CREDENTIAL_PARAM = /([?&](?:write_?key|[a-z_]*token|api_?key|key|secret|[a-z_]*password|sig|signature|code|auth)=)([^&#]*)/gi
/** `scheme://user:` before a password, up to the `@` that ends the userinfo (the last one before the path). */
const USERINFO_PASSWORD = /^([a-z][a-z\d+.-]*:\/\/[^/?#@:]*:)([^/?#]*)@/i

/**
 * `url` with the password of its userinfo (`postgres://user:PASSWORD@host`) and the values of
 * credential query parameters (`writeKey`, `token`, `api_key`, `password`, …) masked.
 */
export function maskUrl(url: string): string {
  return url
    .replace(USERINFO_PASSWORD, (_, before: string, password: string) => `${before}${maskSecret(password)}@`)
    .replace(CREDENTIAL_PARAM, (_, name: string, value: string) => name + maskSecret(value))
}

/** A value as `maskSecret` shows it: `…`, as written or percent-encoded (`new URL` encodes it). */
const MASKED_VALUE = /^(?:…|%E2%80%A6)/i

/**
 * Whether `url` carries a credential as `maskUrl` shows it (`?token=…1234`, `user:…@`): a URL read
 * from an admin answer, which stands for the URL it was shown for, not one to send anything to.
 */
export function hasMaskedCredential(url: string): boolean {
  const password = USERINFO_PASSWORD.exec(url)?.[2]
  if (password !== undefined && MASKED_VALUE.test(password)) return true
  return [...url.matchAll(CREDENTIAL_PARAM)].some((match) => MASKED_VALUE.test(match[2]))
}
