/**
 * Deep merge of plain JSON objects, `own` winning over `base`: nested objects merge, everything
 * else (arrays included) is replaced. Neither input is mutated, and a `__proto__` key parsed from
 * JSON stays an ordinary property instead of replacing a prototype.
 */
import { isPlainObject } from './validate.js'

type Json = Record<string, unknown>

/** `target[key] = value`, except that a `__proto__` key becomes an own property. */
export function assign(target: Json, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

export function mergeUnder(base: Json | undefined, own: Json | undefined): Json | undefined {
  if (base === undefined || Object.keys(base).length === 0) return own
  if (own === undefined) return base
  const out: Json = {}
  for (const key of Object.keys(base)) assign(out, key, base[key])
  for (const key of Object.keys(own)) {
    const mine = own[key]
    const theirs = Object.hasOwn(out, key) ? out[key] : undefined
    assign(out, key, isPlainObject(mine) && isPlainObject(theirs) ? mergeUnder(theirs, mine) : mine)
  }
  return out
}
