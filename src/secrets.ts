/**
 * How secrets (write keys, shared secrets, admin tokens) appear in any output: CLI lines, DEBUG
 * lines, error messages, stats. At most their last four characters, and none of a short one.
 */
export function maskSecret(secret: string): string {
  return secret.length > 8 ? `…${secret.slice(-4)}` : '…'
}

/** `url` with the values of credential query parameters (`writeKey`, `token`) masked. */
export function maskUrl(url: string): string {
  return url.replace(/([?&](?:writeKey|write_key|token)=)([^&#]*)/gi, (_, name: string, value: string) => name + maskSecret(value))
}
