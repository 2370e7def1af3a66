/**
 * `Retry-After` (RFC 9110 §10.2.3): either delay-seconds or an HTTP date. Returns the delay in
 * milliseconds, capped at `capMs`, or `undefined` when the header is absent or unreadable.
 */
export function parseRetryAfter(
  header: string | null | undefined,
  capMs: number,
  now: number = Date.now(),
): number | undefined {
  if (header == null) return undefined
  // A blank header is neither form: no digit, no letter.
  const value = header.trim()
  // Seconds, whole or not ("1.5"; a fraction of a millisecond waits the whole one).
  if (/^\d*\.?\d+$/.test(value)) return Math.min(Math.ceil(Number(value) * 1000), capMs)
  // Every HTTP-date form names its month; without a letter it is not a date (Date.parse would
  // still accept "-5" or "1,5").
  if (!/[a-z]/i.test(value)) return undefined
  const date = Date.parse(value)
  if (Number.isNaN(date)) return undefined
  return Math.min(Math.max(0, date - now), capMs)
}
