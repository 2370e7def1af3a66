/**
 * "Did you mean …?" for a mistyped flag or option: the known name closest to what was typed, or
 * `undefined` when none is close enough to be a good guess. The CLI's flags and `--config` keys,
 * the collector's options at any depth (`unknownOption`), the Client's (src/client/options.ts) and
 * the events of `on()` (src/emitter.ts) guess with it.
 */
import { ConfigError } from './errors.js'

/** Case, dashes and underscores do not count: `--writeKey`, `--write_key` and `--writekey` are `--write-key`. */
const normalise = (name: string) => name.toLowerCase().replace(/[-_]/g, '')

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/** Letters two names begin with alike (normalised). */
const sharedStart = (a: string, b: string) => {
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return i
}

/**
 * The name in `known` that `typed` most likely meant: the one `synonyms` gives for it (another
 * library's name for the option: `host` → `endpoint`); the same but for case, dashes and
 * underscores; else one or two edits away (one for names of four letters or fewer); else the only
 * name with `typed` as one of its words (`--key` → `write-key`, `timeout` → `drainTimeout`); else
 * the only one that begins as `typed` does for four letters and most of the shorter name
 * (`hostname` → `host`, `maxBodySize` → `maxBodyBytes`).
 */
export function closest(typed: string, known: readonly string[], synonyms?: Readonly<Record<string, string>>): string | undefined {
  const wanted = normalise(typed)
  if (wanted === '') return undefined
  const synonym = synonyms && Object.hasOwn(synonyms, typed) ? synonyms[typed] : undefined
  if (synonym !== undefined && known.includes(synonym)) return synonym
  const same = known.find((name) => normalise(name) === wanted)
  if (same !== undefined) return same
  const limit = wanted.length <= 4 ? 1 : 2
  let best: { name: string; edits: number } | undefined
  for (const name of known) {
    const edits = distance(wanted, normalise(name))
    if (edits <= limit && (best === undefined || edits < best.edits)) best = { name, edits }
  }
  if (best !== undefined) return best.name
  const words = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase().split(/[-_]/)
  const byWord = known.filter((name) => words(name).includes(typed.toLowerCase()))
  if (byWord.length > 0) return byWord.length === 1 ? byWord[0] : undefined
  const byStart = known.filter((name) => {
    const shared = sharedStart(wanted, normalise(name))
    return shared >= 4 && shared / Math.min(wanted.length, normalise(name).length) > 0.6
  })
  return byStart.length === 1 ? byStart[0] : undefined
}

/**
 * The error for `key`, unknown in the object at `at` (`''`: the top level), naming its path, the
 * known key it most likely meant as a path too, and every known key:
 * ``Unknown option `sources[0].writeky` (did you mean `sources[0].writeKey`?); known: writeKey, …``.
 */
export function unknownOption(at: string, key: string, known: Iterable<string>, synonyms?: Readonly<Record<string, string>>): ConfigError {
  const names = [...known]
  const path = (name: string) => (at === '' ? name : `${at}.${name}`)
  const guess = closest(key, names, synonyms)
  return new ConfigError(path(key), `Unknown option \`${path(key)}\`${guess === undefined ? '' : ` (did you mean \`${path(guess)}\`?)`}; known: ${names.join(', ')}.`)
}

/** Throws `unknownOption`'s error for the first key of `object` (at path `at`) that is not in `known`. */
export function refuseUnknownKeys(object: object, known: ReadonlySet<string>, at: string, synonyms?: Readonly<Record<string, string>>): void {
  for (const key of Object.keys(object)) if (!known.has(key)) throw unknownOption(at, key, known, synonyms)
}
