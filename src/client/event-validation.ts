/**
 * Run-time tracking plans in the client: a `track()` whose event has a Standard Schema validator
 * (option `schema`) is checked before it is queued. A failure becomes a `ValidationError` naming
 * the event and the field path; the message is reported, not sent.
 *
 * Validators may answer with a Promise (Standard Schema allows it). Such a message waits in
 * `OrderedGate`, and so does every message queued after it, of any type, until the verdicts
 * before it are in: messages reach the queue in call order, and none is lost (`flush()` and
 * `close()` wait for the gate first). Synchronous verdicts with nothing waiting pass straight on.
 */
import { messageOf, ValidationError } from '../errors.js'
import { fieldPath } from '../message/field-path.js'
import type { StandardResult, StandardSchemaV1 } from '../message/standard-schema.js'
import { describe } from '../message/validate.js'
import type { SentMessage } from '../message/types.js'
import { setBackgroundTimeout, type TimerHandle } from '#platform'

/** `undefined`: the message passes (or has no validator); an error: it fails; a Promise: not known yet. */
export type Verdict = ValidationError | undefined | Promise<ValidationError | undefined>

const MAX_LISTED = 5
const STOPPED = 0

function verdict(event: string, message: SentMessage, result: unknown): ValidationError | undefined {
  if (typeof result !== 'object' || result === null) {
    return failure('properties', `The schema of event ${JSON.stringify(event)} answered ${describe(result)}, not { value } or { issues }.`, message)
  }
  const { issues } = result as StandardResult<unknown>
  if (!issues) return undefined
  try {
    const listed = issues.slice(0, MAX_LISTED).map((issue) => `${fieldPath(issue.path)}: ${issue.message}`).join('; ')
    const more = issues.length > MAX_LISTED ? ` (and ${issues.length - MAX_LISTED} more)` : ''
    return failure(fieldPath(issues[0]?.path), `Event ${JSON.stringify(event)} does not match its schema: ${listed || 'no issue given'}${more}.`, message)
  } catch (error) {
    return threw(event, message, error) // `issues` is not a list of { message, path }
  }
}

const failure = (field: string, text: string, message: SentMessage, cause?: unknown) =>
  new ValidationError(field, text, { messages: [message], cause })

const threw = (event: string, message: SentMessage, cause: unknown) =>
  failure('properties', `The schema of event ${JSON.stringify(event)} threw: ${messageOf(cause)}`, message, cause)

/**
 * Checks a track message's properties against its event's validator, if there is one. A verdict
 * that is not in within `timeoutMs` (the client's `timeout`) fails the message: a validator that
 * never answers would hold every later message, and `flush()`, for good.
 */
export function checkEvent(schemas: Readonly<Record<string, StandardSchemaV1>>, message: SentMessage<'track'>, timeoutMs: number): Verdict {
  const { event } = message
  if (!Object.hasOwn(schemas, event)) return undefined
  let result: unknown
  try {
    result = schemas[event]['~standard'].validate(message.properties ?? {})
  } catch (error) {
    return threw(event, message, error)
  }
  if (typeof (result as Partial<Promise<unknown>> | null)?.then === 'function') {
    let timer: TimerHandle
    return Promise.race([
      Promise.resolve(result).then((r) => verdict(event, message, r), (error: unknown) => threw(event, message, error)),
      new Promise<ValidationError>((resolve) => {
        timer = setBackgroundTimeout(() => resolve(failure('properties', `The schema of event ${JSON.stringify(event)} did not answer within ${timeoutMs} ms.`, message)), timeoutMs)
      }),
    ]).finally(() => clearTimeout(timer))
  }
  return verdict(event, message, result)
}

/**
 * Passes items on in the order they were pushed, each once its verdict is known: `accept` when it
 * passes, `reject` when it fails. Never rejects; `settled()` resolves once everything pushed so
 * far has been passed on.
 */
export class OrderedGate<T> {
  readonly #accept: (item: T) => void
  readonly #reject: (item: T, error?: ValidationError) => void
  #waiting = 0
  #tail: Promise<void> = Promise.resolve()
  #stop!: (verdict: typeof STOPPED) => void
  readonly #stopped = new Promise<typeof STOPPED>((resolve) => (this.#stop = resolve))

  /** `reject` without an error: the item was waiting when the gate was stopped. */
  constructor(accept: (item: T) => void, reject: (item: T, error?: ValidationError) => void) {
    this.#accept = accept
    this.#reject = reject
  }

  /** Items held behind a verdict not yet known. */
  get size(): number {
    return this.#waiting
  }

  push(item: T, verdict: Verdict): void {
    if (this.#waiting === 0 && !(verdict instanceof Promise)) {
      this.#pass(item, verdict)
      return
    }
    this.#waiting++
    this.#tail = this.#tail.then(() => Promise.race([verdict, this.#stopped])).then((error) => {
      this.#waiting--
      if (error === STOPPED) this.#reject(item)
      else this.#pass(item, error)
    })
  }

  /** Items still waiting for a verdict are rejected (without an error) at once, in order. */
  stop(): void {
    this.#stop(STOPPED)
  }

  settled(): Promise<void> {
    return this.#tail
  }

  #pass(item: T, error: ValidationError | undefined): void {
    if (error === undefined) this.#accept(item)
    else this.#reject(item, error)
  }
}
