/**
 * The shape checks a message's JSON text must pass besides its size: nesting at most `MAX_DEPTH`
 * levels, and no `Map` or `Set` (which JSON turns into `{}`), each error naming the field. Shared
 * by ./serialize.ts and the byte store's parts (../queue/byte-queue.ts `checkParts`).
 */
import { ValidationError } from '../errors.js'
import { MAX_DEPTH } from '../limits.js'

/** Throws for the first `Map` or `Set` in `value` (at `path`), naming it and what to pass instead. */
export function refuseCollections(value: unknown, path: string, seen = new Set<object>()): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return
  // By its tag, not `instanceof`: a Map from another realm (an iframe, a `vm` context) too.
  const kind = /^\[object (Map|Set)\]$/.exec(Object.prototype.toString.call(value))?.[1]
  if (kind) {
    const instead = kind === 'Map' ? 'Object.fromEntries(map)' : '[...set]'
    throw new ValidationError(path, `Cannot send \`${path}\`: it is a ${kind}, which JSON would turn into \`{}\`. Pass ${instead} instead.`)
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return
  seen.add(value)
  for (const [key, child] of Object.entries(value)) {
    refuseCollections(child, Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key, seen)
  }
}

/** Whether `json` (any JSON text) nests objects and arrays more than `max` levels (string contents are skipped). */
export function tooDeep(json: string, max: number): boolean {
  // Depth never exceeds the number of `{` and `[`: a few native searches clear almost every message.
  let opens = 0
  for (const bracket of '{[') for (let i = json.indexOf(bracket); i >= 0 && opens <= max; i = json.indexOf(bracket, i + 1)) opens++
  if (opens <= max) return false
  let depth = 0
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (c === '"') {
      while (json[++i] !== '"') if (json[i] === '\\') i++
    } else if (c === '{' || c === '[') {
      if (++depth > max) return true
    } else if (c === '}' || c === ']') depth--
  }
  return false
}

/** Is `value` nested more than `levels` deep? Recursion stops at `levels`, so it cannot overflow. */
export function deeperThan(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return false
  if (levels <= 0) return true
  for (const key in value) if (deeperThan((value as Record<string, unknown>)[key], levels - 1)) return true
  return false
}

/** The error for a message nested too deep, naming its first field that is. */
export function tooDeepError(message: Record<string, unknown>): ValidationError {
  const field = Object.keys(message).find((key) => deeperThan(message[key], MAX_DEPTH - 1)) ?? 'message'
  return new ValidationError(field, `\`${field}\` nests objects and arrays too deep: a message may nest at most ${MAX_DEPTH} levels (the message itself is the first).`)
}
