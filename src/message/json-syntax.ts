/**
 * Where a text stops being JSON, said without quoting it. The engines' own messages quote the
 * text around the problem (V8: `Unexpected token 'W', ..."writeKey":WRITEKEY_S"... is not valid
 * JSON`; JavaScriptCore names the whole unexpected identifier), and the text of a request body or
 * a `--config` file holds write keys and tokens. Called only once `JSON.parse` (or the exact
 * parser) has refused the text, so the cost of a second pass does not matter.
 */

const WHITESPACE = /[ \t\n\r]*/y
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const LITERAL = /true|false|null/y
/** The longest run of a string's contents that is valid (after its opening quote). */
const STRING_PART = /(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y

export interface JsonSyntaxError {
  /** Index in the text (UTF-16 code units, as `JSON.parse` counts). */
  position: number
  /** What was expected there: `a value`, `` `,` or `}` ``, … */
  expected: string
}

/** The first place where `text` is not JSON (RFC 8259, as `JSON.parse` reads it); `undefined` when it is JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0
  const closers: string[] = []
  const match = (pattern: RegExp): boolean => {
    pattern.lastIndex = i
    if (!pattern.test(text) || pattern.lastIndex === i) return false
    i = pattern.lastIndex
    return true
  }
  const skip = () => void match(WHITESPACE)
  const error = (expected: string): JsonSyntaxError => ({ position: i, expected })
  const string = (): JsonSyntaxError | undefined => {
    i++
    match(STRING_PART)
    if (text[i] === '"') return void i++
    if (i >= text.length) return error('the closing `"` of a string')
    return error(text[i] === '\\' ? 'a valid escape (`\\"`, `\\\\`, `\\n`, `\\u00e9`, …)' : 'no control character in a string (escape it)')
  }
  /** After `{` or `,` in an object: `"name":`. */
  const member = (first: boolean): JsonSyntaxError | undefined => {
    skip()
    if (text[i] !== '"') return error(first ? 'a property name in double quotes or `}`' : 'a property name in double quotes')
    const bad = string()
    if (bad) return bad
    skip()
    if (text[i] !== ':') return error('`:`')
    i++
  }
  for (;;) {
    // A value.
    skip()
    const c = text[i]
    if (c === '{' || c === '[') {
      i++
      skip()
      const close = c === '{' ? '}' : ']'
      if (text[i] !== close) {
        closers.push(close)
        const bad = close === '}' ? member(true) : undefined
        if (bad) return bad
        continue
      }
      i++
    } else if (c === '"') {
      const bad = string()
      if (bad) return bad
    } else if (!match(NUMBER) && !match(LITERAL)) {
      return error('a value (an object, array, string, number, true, false or null)')
    }
    // After a value: the end of its object or array, or `,` and the next.
    for (;;) {
      skip()
      const close = closers.at(-1)
      if (close === undefined) return i >= text.length ? undefined : error('the end of the text')
      if (text[i] === close) {
        i++
        closers.pop()
        continue
      }
      if (text[i] !== ',') return error(`\`,\` or \`${close}\``)
      i++
      if (close === '}') {
        const bad = member(false)
        if (bad) return bad
      }
      break
    }
  }
}

/**
 * Why `text` is not JSON, with the position (and line and column) but none of the text:
 * ``expected `:` at position 14 (line 1, column 15)``.
 */
export function describeJsonSyntaxError(text: string): string {
  const found = findJsonSyntaxError(text)
  // The exact parser refused what the grammar allows (it should not): no position to give.
  if (found === undefined) return 'it could not be parsed'
  const before = text.slice(0, found.position)
  const line = before.split('\n').length
  const column = found.position - before.lastIndexOf('\n')
  const where = `position ${found.position} (line ${line}, column ${column})`
  return found.position >= text.length ? `it ends at ${where}, where ${found.expected} was expected` : `expected ${found.expected} at ${where}`
}
