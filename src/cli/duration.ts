/**
 * A duration flag's value (`--retention 24h`, `--disable-after 24h`): a whole number of ms, or one with a unit (`ms`,
 * `s`, `m`, `h`, `d`), in ms. Anything else is a `UsageError` naming the flag and the forms.
 */
import { UsageError } from './usage-error.js'

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

export function duration(flag: string, text: string, maxMs: number): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim())
  const ms = match ? Number(match[1]) * UNITS[match[2] ?? 'ms'] : Number.NaN
  if (!Number.isSafeInteger(ms) || ms > maxMs) {
    throw new UsageError(`--${flag} expects a duration such as 24h, 30m, 90s or 86400000 (ms), at most ${maxMs / UNITS.d} days, got "${text}".`)
  }
  return ms
}
