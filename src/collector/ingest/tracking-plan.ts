/**
 * A source's tracking plan: a JSON Schema (draft-07, with ajv-formats' formats) per track event,
 * for the event's `properties`, compiled once when the collector is created. Ingest asks
 * `verdict(message)` for each accepted message: `undefined` when it may be forwarded, or why
 * not (an unplanned event, or properties that break the plan) and whether that blocks it.
 *
 * Only `track` messages are checked; the other types pass. A bad plan (not an object, an
 * unknown keyword, a mistyped `type`, an unknown format…) is a `ConfigError` naming the event.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { ConfigError, messageOf } from '../../errors.js'
import { refuseUnknownKeys } from '../../closest.js'
import { fieldPath } from '../../message/field-path.js'
import { describe, isPlainObject } from '../../message/validate.js'
import { addExactNumbers, numbersFor, withExactNumbers } from './plan-numbers.js'

export type PlanPolicy = 'allow' | 'block'

export interface TrackingPlanConfig {
  /** Event name → JSON Schema of its `properties` (draft-07). */
  events: Record<string, Record<string, unknown> | boolean>
  /** What to do with a track whose event is not in `events` (default `'allow'`: forward it). */
  unplanned?: PlanPolicy
  /** What to do with a track whose properties break its schema (default `'block'`: do not forward). */
  violations?: PlanPolicy
}

/** Why a message breaks the plan, and whether that keeps it from being forwarded. */
export interface PlanVerdict {
  blocked: boolean
  reason: string
}

export interface TrackingPlan {
  /** `hasBigInt`: the body held integers beyond 2^53, read as `bigint`s (see exact-json.ts). */
  verdict(message: Record<string, unknown>, hasBigInt?: boolean): PlanVerdict | undefined
}

const PLAN_KEYS = new Set(['events', 'unplanned', 'violations'])
const MAX_LISTED = 5

function policy(value: unknown, option: string, fallback: PlanPolicy): PlanPolicy {
  if (value === undefined) return fallback
  if (value !== 'allow' && value !== 'block') {
    throw new ConfigError(option, `Expected \`${option}\` to be 'allow' or 'block', got ${describe(value)}.`)
  }
  return value
}

/** The keys of ajv's JSON Pointer `/items/0/sku` (array indexes as numbers). */
function pointerKeys(pointer: string): Array<string | number> {
  if (pointer === '') return []
  return pointer.slice(1).split('/').map((k) => {
    const key = k.replace(/~1/g, '/').replace(/~0/g, '~')
    return /^(?:0|[1-9]\d*)$/.test(key) ? Number(key) : key
  })
}

/** `properties.items[0].sku must be string`, `properties.orderId is required`. */
function describeError(e: ErrorObject): string {
  const keys = pointerKeys(e.instancePath)
  const params = e.params as { missingProperty?: string; additionalProperty?: string }
  if (e.keyword === 'required' && params.missingProperty !== undefined) return `${fieldPath([...keys, params.missingProperty])} is required`
  if (e.keyword === 'additionalProperties' && params.additionalProperty !== undefined) {
    return `${fieldPath([...keys, params.additionalProperty])} is not in the plan`
  }
  return `${fieldPath(keys)} ${e.message ?? 'is invalid'}`
}

function describeErrors(errors: readonly ErrorObject[]): string {
  const listed = errors.slice(0, MAX_LISTED).map(describeError).join('; ')
  return listed + (errors.length > MAX_LISTED ? ` (and ${errors.length - MAX_LISTED} more)` : '')
}

/**
 * Validates and compiles a source's `trackingPlan` (`at` is its option path, e.g.
 * `sources[0].trackingPlan`). Returns `undefined` when there is none.
 */
export function compileTrackingPlan(input: unknown, at: string): TrackingPlan | undefined {
  if (input === undefined) return undefined
  if (!isPlainObject(input)) {
    throw new ConfigError(at, `Expected \`${at}\` to be an object { events, unplanned?, violations? }, got ${describe(input)}.`)
  }
  refuseUnknownKeys(input, PLAN_KEYS, at)
  const unplanned = policy(input.unplanned, `${at}.unplanned`, 'allow')
  const violations = policy(input.violations, `${at}.violations`, 'block')
  if (!isPlainObject(input.events)) {
    throw new ConfigError(`${at}.events`, `Expected \`${at}.events\` to be an object (event name → JSON Schema of its properties), got ${describe(input.events)}.`)
  }
  // One ajv per plan: strict about the schema itself (unknown keywords and formats are errors),
  // all errors collected, so a reason lists every broken field.
  const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false })
  addFormats(ajv)
  // Integers beyond 2^53 are judged as the numbers they are (./plan-numbers.ts): the bigints of
  // the properties being validated, by JSON Pointer, while `verdict` validates them.
  let exactValues: Map<string, bigint> | undefined
  addExactNumbers(ajv, () => exactValues)
  const validators = new Map<string, ValidateFunction>()
  for (const [event, schema] of Object.entries(input.events)) {
    const option = `${at}.events[${JSON.stringify(event)}]`
    if (!isPlainObject(schema) && typeof schema !== 'boolean') {
      throw new ConfigError(option, `Expected \`${option}\` to be a JSON Schema (an object or a boolean), got ${describe(schema)}.`)
    }
    try {
      validators.set(event, ajv.compile(withExactNumbers(schema) as typeof schema))
    } catch (error) {
      // ajv words an unknown format as a warning ("… ignored in schema …"), though it refuses it.
      const problem = messageOf(error).replace(/^unknown format ("[^"]*") ignored in schema at path/, 'unknown format $1, at path')
      if (error instanceof EvalError) {
        // ajv compiles each schema to a function; Cloudflare Workers and strict CSPs forbid that.
        throw new ConfigError(option, `\`${option}\` cannot be compiled here: this runtime forbids code generation (${problem}); tracking plans need Node, Bun or Deno.`)
      }
      throw new ConfigError(option, `\`${option}\` is not a valid JSON Schema: ${problem}`)
    }
  }
  return {
    verdict(message, hasBigInt = false) {
      if (message.type !== 'track') return undefined
      const event = message.event as string
      const validate = validators.get(event)
      if (validate === undefined) {
        return { blocked: unplanned === 'block', reason: `Event ${JSON.stringify(event)} is not in the tracking plan.` }
      }
      const properties = message.properties ?? {}
      if (hasBigInt) exactValues = new Map()
      try {
        if (validate(hasBigInt ? numbersFor(properties, exactValues!) : properties)) return undefined
      } finally {
        exactValues = undefined
      }
      return {
        blocked: violations === 'block',
        reason: `Event ${JSON.stringify(event)} does not match the tracking plan: ${describeErrors(validate.errors ?? [])}.`,
      }
    },
  }
}
