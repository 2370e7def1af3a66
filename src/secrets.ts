/**
 * How secrets (write keys, shared secrets, admin tokens) appear in any output: CLI lines, DEBUG
 * lines, error messages, stats. At most their last four characters, and none of a short one.
 */
export function maskSecret(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '…'
}

/** Query parameters that carry credentials: write keys, tokens, API keys, secrets, signatures. */
const CREDENTIAL_PARAM = /([?&](?:write_?key|[a-z_]*token|api_?key|key|secret|password|sig|signature)=)([^&#]*)/gi

/** `url` with the values of credential query parameters (`writeKey`, `token`, `api_key`, …) masked. */
export function maskUrl(url: string): string {
  return url.replace(CREDENTIAL_PARAM, (_, name: string, value: string) => name + maskSecret(value))
}
