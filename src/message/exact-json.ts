/**
 * JSON that keeps integers exact: `JSON.parse` turns `9223372036854775807` into
 * `9223372036854776000`, silently changing an int64 ID. Here an integer beyond ±(2^53 − 1) is
 * read as a `bigint` and written back digit for digit.
 *
 * Fast path: such an integer has at least 16 digits in a row, and `mayHoldLongInteger` finds
 * out whether the text holds a run that long where a number can start (after `:`, `,` or `[`),
 * reading only one character in 16. When it does not (nearly every batch, including those with
 * long digit strings such as `"id_str":"1234567890123456789"`), `JSON.parse` is already exact. When it does, the text is parsed with
 * `lossless-json`, whose number hook sees each number's source digits.
 *
 * `lossless-json` is imported when the collector starts, or when the webhook handler first meets
 * such a body (`loadExactJson`), not with the module:
 * in a bundle (a worker serving the collector) it is a chunk of its own, outside the entry. The
 * collector's requests wait for it with the rest of its start, and the queue server's bus before
 * it listens; a bigint only ever comes from the slow path, so `stringifyExact` never runs first.
 *
 * Other numbers have the value a 64-bit float gives them, as with `JSON.parse` (`1.0` → `1`).
 */
import { MAX_DEPTH } from '../limits.js'
import { tooDeep } from './validate.js'

type LosslessJson = typeof import('lossless-json')

let lossless: LosslessJson | undefined
let loading: Promise<void> | undefined

/** Imports `lossless-json` once; `parseExact`'s slow path and `stringifyExact` need it loaded. */
export function loadExactJson(): Promise<void> {
  return (loading ??= import('lossless-json').then((module) => void (lossless = module)))
}

function losslessJson(): LosslessJson {
  if (lossless === undefined) throw new Error('lossless-json is not loaded: await loadExactJson() before parsing.')
  return lossless
}

const INTEGER = /^-?\d+$/

export interface ParsedJson {
  value: unknown
  /** Whether some value is a `bigint` (serialise it with `stringifyExact`, not `JSON.stringify`). */
  hasBigInt: boolean
  /**
   * Read by `JSON.parse` though it may hold an integer beyond 2^53 (it nests too deep for the
   * exact parser): its long integers, wherever they are, may be rounded.
   */
  inexact?: true
}

const isDigit = (code: number) => code >= 48 && code <= 57

const isSpace = (code: number) => code === 32 || code === 9 || code === 10 || code === 13
/** `:` `,` `[`: what may come (after spaces) before a number in JSON. */
const opensValue = (code: number) => code === 58 || code === 44 || code === 91

/**
 * Whether `text` holds 16 or more ASCII digits in a row that may be a number: the run follows
 * `:`, `,` or `[` (spaces and one `-` between), or starts the text. Any such run covers a position
 * `i` with `i % 16 === 15`, so only those are probed, and the run around a digit found there is
 * measured, which is several times faster than `/\d{16}/.test(text)` on a large batch.
 * It may say yes for text inside a string (`"a:1234567890123456"`): the slow path is then exact too.
 */
export function mayHoldLongInteger(text: string): boolean {
  for (let i = 15; i < text.length; i += 16) {
    if (!isDigit(text.charCodeAt(i))) continue
    let start = i
    while (start > 0 && isDigit(text.charCodeAt(start - 1))) start--
    let end = i
    while (end + 1 < text.length && isDigit(text.charCodeAt(end + 1))) end++
    if (end - start < 15) continue
    let before = start - 1
    if (before >= 0 && text.charCodeAt(before) === 45) before--
    while (before >= 0 && isSpace(text.charCodeAt(before))) before--
    if (before < 0 || opensValue(text.charCodeAt(before))) return true
    i = end
  }
  return false
}

/**
 * Parses JSON like `JSON.parse` (the last of duplicate keys wins), integers kept exact.
 * `lossless-json` parses and writes recursively, so text nested deeper than any message may be
 * (`MAX_DEPTH`, plus the batch's object and array) goes to `JSON.parse`, which does not overflow,
 * marked `inexact`: the message that nests too deep is refused (400 naming it), so its digits no
 * longer matter; where no message does (a member beside `batch` nests that deep), the caller
 * refuses the body rather than keep rounded digits.
 */
export function parseExact(text: string): ParsedJson {
  if (!mayHoldLongInteger(text)) return { value: JSON.parse(text), hasBigInt: false }
  if (tooDeep(text, MAX_DEPTH + 2)) return { value: JSON.parse(text), hasBigInt: false, inexact: true }
  let hasBigInt = false
  const parseNumber = (digits: string): number | bigint => {
    const number = Number(digits)
    if (Number.isSafeInteger(number) || !INTEGER.test(digits)) return number
    hasBigInt = true
    return BigInt(digits)
  }
  const value = losslessJson().parse(text, null, { parseNumber, onDuplicateKey: ({ newValue }) => newValue })
  return { value, hasBigInt }
}

/** `JSON.stringify`, except that a `bigint` is written as its digits. */
export function stringifyExact(value: unknown, hasBigInt: boolean): string {
  if (!hasBigInt) return JSON.stringify(value)
  const text = losslessJson().stringify(value)
  if (text === undefined) throw new TypeError('The value has no JSON form.')
  return text
}
