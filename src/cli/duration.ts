/**
 * A flag's duration: an integer with a unit (`24h`, `30m`, `90s`, `1500ms`, `7d`), or ms without
 * one (`0`), as ms. What the collector's durations read on the command line (`--disable-after`).
 */
import { UsageError } from './usage-error.js'

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

export function duration(flag: string, text: string, max: number): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text.trim())
  const value = match ? Number(match[1]) * UNITS[match[2] ?? 'ms'] : Number.NaN
  if (!Number.isSafeInteger(value) || value > max) {
    throw new UsageError(`--${flag} expects a duration: an integer with a unit, ms, s, m, h or d (24h, 30m), or ms alone (0), at most ${max / UNITS.d} days; got "${text}".`)
  }
  return value
}
