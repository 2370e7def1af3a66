/**
 * Python's `json.dumps` writes a float that is not finite as `NaN`, `Infinity` or `-Infinity`,
 * which is not JSON; analytics-python sends such a batch as it is, and takes the 400 it gets as
 * final, so one `float('nan')` in one event's properties loses its whole batch. Read here as
 * `null`: what `JSON.stringify` writes for them, so the same value arrives the same way from our
 * client and from Python's.
 */

/**
 * `text` with each `NaN`, `Infinity` and `-Infinity` outside its strings written as `null`, or
 * `undefined` when it has none. Only for a text `JSON.parse` refused: whether the result is JSON
 * is for the parser to say (`NaNa` stays invalid: only the token itself is replaced).
 */
export function nonFiniteAsNull(text: string): string | undefined {
  let out = ''
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 34) {
      // A string: skipped to its closing quote, escapes included.
      for (i++; i < text.length && text.charCodeAt(i) !== 34; i++) if (text.charCodeAt(i) === 92) i++
    } else if (code === 78 && text.startsWith('NaN', i)) {
      out += `${text.slice(from, i)}null`
      from = i += 3
      i--
    } else if (code === 73 && text.startsWith('Infinity', i)) {
      const start = i > 0 && text.charCodeAt(i - 1) === 45 ? i - 1 : i
      out += `${text.slice(from, start)}null`
      from = i += 8
      i--
    }
  }
  return from === 0 ? undefined : out + text.slice(from)
}
