/**
 * A tracking plan's numeric keywords (`maximum`, `minimum`, `exclusiveMaximum`,
 * `exclusiveMinimum`, `multipleOf`), judged exactly for integers beyond ±(2^53 − 1), which ingest
 * reads as `bigint`s and forwards digit for digit. JSON Schema validators know only numbers: ajv
 * judging the nearest number would pass `9007199254740993` under `maximum: 2 ** 53` (it rounds to
 * 2^53) and `1152921504606846977` under `multipleOf: 2` (it rounds to an even number), and fail
 * `2 ** 60 - 1` under `exclusiveMaximum: 2 ** 60`.
 *
 * So the plan's schemas are compiled with those keywords moved into one keyword of ours
 * (`withExactNumbers`), which ajv calls with the number it sees and its `instancePath`: where that
 * path held a `bigint`, the bigint is judged (a bigint compares exactly with a number in
 * JavaScript; `multipleOf` by exact integer arithmetic on the divisor's decimal digits), else the
 * number, as ajv itself would, but for `multipleOf`. Errors keep ajv's keywords and messages
 * (`must be <= 10`).
 *
 * `multipleOf` judges a number by the decimal digits it was sent as, too: ajv divides floats, so
 * `19.99` failed `multipleOf: 0.01` (19.99 / 0.01 is 1998.9999999999998), the plan a price needs.
 */
import type { Ajv, ErrorObject } from 'ajv'
import { isPlainObject } from '../../message/validate.js'

const EXACT_KEYWORD = 'exactNumberLimits'
const NUMERIC = new Set(['maximum', 'minimum', 'exclusiveMaximum', 'exclusiveMinimum', 'multipleOf'])
/** Keywords whose values are data (compared, not validated against): copied as they are. */
const DATA = new Set(['const', 'enum', 'default', 'examples'])
/** Keywords whose values map names to schemas (a property may be called `maximum` or `const`). */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs', 'dependencies'])

type Limits = Partial<Record<'maximum' | 'minimum' | 'exclusiveMaximum' | 'exclusiveMinimum' | 'multipleOf', number>>

/** A copy of `schema` (draft-07) whose numeric keywords sit in our keyword; the input is untouched. */
export function withExactNumbers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withExactNumbers)
  if (!isPlainObject(schema)) return schema
  const out: Record<string, unknown> = {}
  let limits: Limits | undefined
  for (const [key, value] of Object.entries(schema)) {
    if (DATA.has(key)) out[key] = value
    else if (NUMERIC.has(key) && typeof value === 'number') (limits ??= {})[key as keyof Limits] = value
    else if (SCHEMA_MAPS.has(key) && isPlainObject(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withExactNumbers(sub)]))
    } else out[key] = withExactNumbers(value)
  }
  if (limits) out[EXACT_KEYWORD] = limits
  return out
}

/**
 * `|value|` as a fraction p/q of bigints, from its shortest decimal form (`0.1` is 1/10): the
 * digits the number was sent as, for any number JSON text reads back to itself.
 */
function fraction(value: number): [bigint, bigint] {
  const match = /^-?(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value))
  if (!match) return [1n, 0n] // Not finite: nothing is a multiple of it.
  const [, whole, decimals = '', exponent = '0'] = match
  const shift = Number(exponent) - decimals.length
  const digits = BigInt(whole + decimals)
  return shift >= 0 ? [digits * 10n ** BigInt(shift), 1n] : [digits, 10n ** BigInt(-shift)]
}

function isMultiple(value: number | bigint, divisor: number): boolean {
  // Safe integers divide exactly as numbers.
  if (typeof value === 'number' && Number.isSafeInteger(value) && Number.isSafeInteger(divisor)) return value % divisor === 0
  const [p, q] = fraction(divisor)
  if (q === 0n || p === 0n) return false
  if (typeof value === 'bigint') return (value * q) % p === 0n
  // value = a/b and divisor = p/q: a multiple when (a·q)/(b·p) is a whole number.
  const [a, b] = fraction(value)
  return b !== 0n && (a * q) % (b * p) === 0n
}

type Problem = Pick<ErrorObject, 'keyword' | 'message' | 'params'>

const bound = (keyword: string, comparison: string, limit: number): Problem => ({ keyword, message: `must be ${comparison} ${limit}`, params: { comparison, limit } })

function problems(value: number | bigint, limits: Limits): Problem[] {
  const found: Problem[] = []
  const { maximum, minimum, exclusiveMaximum, exclusiveMinimum, multipleOf } = limits
  if (maximum !== undefined && !(value <= maximum)) found.push(bound('maximum', '<=', maximum))
  if (minimum !== undefined && !(value >= minimum)) found.push(bound('minimum', '>=', minimum))
  if (exclusiveMaximum !== undefined && !(value < exclusiveMaximum)) found.push(bound('exclusiveMaximum', '<', exclusiveMaximum))
  if (exclusiveMinimum !== undefined && !(value > exclusiveMinimum)) found.push(bound('exclusiveMinimum', '>', exclusiveMinimum))
  if (multipleOf !== undefined && !isMultiple(value, multipleOf)) {
    found.push({ keyword: 'multipleOf', message: `must be multiple of ${multipleOf}`, params: { multipleOf } })
  }
  return found
}

/**
 * Registers our keyword on `ajv`. `exactValues()` gives the bigints of the value being validated,
 * by JSON Pointer (`/items/0`), as `numbersFor` recorded them; validation is synchronous.
 */
export function addExactNumbers(ajv: Ajv, exactValues: () => ReadonlyMap<string, bigint> | undefined): void {
  const check = Object.assign(
    (limits: Limits, data: number, _parent: unknown, cxt?: { instancePath: string }): boolean => {
      const found = problems(exactValues()?.get(cxt?.instancePath ?? '') ?? data, limits)
      // ajv reads a `validate` keyword's errors from the function itself.
      check.errors = found.length === 0 ? null : found
      return found.length === 0
    },
    { errors: null as Problem[] | null },
  )
  ajv.addKeyword({ keyword: EXACT_KEYWORD, type: 'number', schemaType: 'object', errors: true, validate: check as never })
}

const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * JSON Schema knows numbers, not bigints: a copy of `value` with each `bigint` as the nearest
 * number (so `type: 'integer'` accepts it), the bigints recorded in `exact` by JSON Pointer for
 * the numeric keywords to judge exactly.
 */
export function numbersFor(value: unknown, exact: Map<string, bigint>, pointer = ''): unknown {
  if (typeof value === 'bigint') {
    exact.set(pointer, value)
    return Number(value)
  }
  if (Array.isArray(value)) return value.map((v, i) => numbersFor(v, exact, `${pointer}/${i}`))
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, numbersFor(v, exact, `${pointer}/${escapePointer(k)}`)]))
  }
  return value
}
