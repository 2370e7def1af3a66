/**
 * Errors that know their HTTP status and render themselves as JSON answers
 * (`{ "success": false, "error": { "code", "message", "field"? } }`), caught by the one
 * top-level `catch` of the handler (the shape of hono's `HTTPException`); and the JSON answer
 * itself, which becomes a `Response` only for a caller that needs one (see http/direct.ts).
 */
import { isMessageTooLargeError, isValidationError } from '../../errors.js'

/** The `error.code` of the collector's JSON error answers: what went wrong, stable across versions. */
export type HttpErrorCode =
  | 'BAD_REQUEST'
  | 'INVALID_JSON'
  | 'INVALID_ENCODING'
  | 'VALIDATION'
  | 'MESSAGE_TOO_LARGE'
  | 'UNAUTHORIZED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'BACKLOG_FULL'
  | 'QUEUE_UNAVAILABLE'
  | 'AUDIENCE_BUSY'
  | 'CONFLICT'
  | 'CLOSED'
  | 'TOO_MANY_ATTEMPTS'
  | 'INTERNAL'

export interface HttpProblemOptions {
  /** The request field the problem is about, e.g. `batch[3].event`. */
  field?: string
  headers?: Record<string, string>
  cause?: unknown
}

/**
 * An error answer of the collector: its HTTP status, code, message and, where the problem is in the
 * request body, the field. It renders itself as the JSON answer the collector sends.
 */
export class HttpProblem extends Error {
  /** The HTTP status of the answer (400, 401, 413, 503, …). */
  readonly status: number
  /** The stable code in the answer's `error.code`. */
  readonly code: HttpErrorCode
  /** The request field the problem is about, e.g. `batch[3].event`. */
  readonly field?: string
  /** Headers of the answer, such as `retry-after` on a 503. */
  readonly headers: Record<string, string>

  constructor(status: number, code: HttpErrorCode, message: string, options: HttpProblemOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'HttpProblem'
    this.status = status
    this.code = code
    if (options.field !== undefined) this.field = options.field
    this.headers = options.headers ?? {}
  }

  /** The JSON answer `{ "success": false, "error": { code, message, field? } }`, plus `extraHeaders`. */
  toAnswer(extraHeaders: Record<string, string> = {}): JsonAnswer {
    const error: Record<string, string> = { code: this.code, message: this.message }
    if (this.field !== undefined) error.field = this.field
    return jsonAnswer(this.status, { success: false, error }, { ...this.headers, ...extraHeaders })
  }
}

/**
 * A 503 its sender should retry, in 5 s (`Retry-After`): the backlog is full, the queue server is
 * away, the collector is shutting down, or another process is syncing the same audience.
 */
export function retryLater(code: 'BACKLOG_FULL' | 'QUEUE_UNAVAILABLE' | 'CLOSED' | 'AUDIENCE_BUSY', message: string): HttpProblem {
  return new HttpProblem(503, code, message, { headers: { 'retry-after': '5' } })
}

/** A JSON answer: its status, its headers (lower-case names) and its text. */
export class JsonAnswer {
  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly text: string,
  ) {}

  toResponse(): Response {
    return new Response(this.text, { status: this.status, headers: this.headers })
  }
}

export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): JsonAnswer {
  return new JsonAnswer(status, { 'content-type': 'application/json; charset=utf-8', ...headers }, JSON.stringify(body))
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return jsonAnswer(status, body, headers).toResponse()
}

export const badRequest = (code: HttpErrorCode, message: string, field?: string) =>
  new HttpProblem(400, code, message, field === undefined ? {} : { field })

export const unauthorized = (message: string, scheme: 'Basic' | 'Bearer' = 'Basic') =>
  new HttpProblem(401, 'UNAUTHORIZED', message, {
    headers: { 'www-authenticate': `${scheme} realm="isomorphic-analytics"` },
  })

/** 404: no endpoint at `path`, or (`message`) what is missing at an endpoint that exists. */
export const notFound = (path: string, message = `No endpoint at ${path}.`) => new HttpProblem(404, 'NOT_FOUND', message)

export const methodNotAllowed = (method: string, path: string, allow = 'POST, OPTIONS') =>
  new HttpProblem(405, 'METHOD_NOT_ALLOWED', `${path} accepts ${allow}, not ${method}.`, {
    headers: { allow },
  })

export const payloadTooLarge = (limit: number, what = 'Request body') =>
  new HttpProblem(413, 'PAYLOAD_TOO_LARGE', `${what} is over the limit of ${limit} bytes.`)

/**
 * A message problem found while handling a request: `ValidationError` and `MessageTooLargeError`
 * become 400s. The message text stays exactly the validator's (the Go v2 wording); `field` says
 * where the problem sits (`batch[3].event`).
 */
export function fromMessageError(error: unknown, at: string): HttpProblem | undefined {
  const join = (field: string) => (at === '' ? field : field === 'message' ? at : `${at}.${field}`)
  if (isValidationError(error)) {
    const where = join(error.field)
    return badRequest('VALIDATION', error.message, where)
  }
  if (isMessageTooLargeError(error)) {
    return badRequest('MESSAGE_TOO_LARGE', error.message, at === '' ? 'message' : at)
  }
  return undefined
}

/** Anything that is not an `HttpProblem` is a bug: a 500 that does not leak internals. */
export function toHttpProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error
  return new HttpProblem(500, 'INTERNAL', 'Internal server error.', { cause: error })
}
