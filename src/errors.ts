/**
 * The error hierarchy. Every error the package throws or reports extends `AnalyticsError` and
 * carries a stable `code`. The `is*` guards match on `code`, so they still work when two bundled
 * copies of the package meet (where `instanceof` would not).
 */

/** The stable `code` of each error class, one per kind: what the `is*` guards match on. */
export type ErrorCode =
  | 'CONFIG'
  | 'VALIDATION'
  | 'MESSAGE_TOO_LARGE'
  | 'CLIENT_CLOSED'
  | 'HTTP'
  | 'NETWORK'
  | 'TIMEOUT'
  | 'QUEUE_FULL'
  | 'ABORTED'
  | 'TLS'
  | 'SIGNATURE'
  | 'ENDPOINT_DISABLED'

export interface AnalyticsErrorOptions {
  /** The underlying error, as `Error`'s standard `cause`. */
  cause?: unknown
  /** Messages this error concerns (failed or dropped). */
  messages?: readonly unknown[]
  /** HTTP status that caused it, where an answer did. */
  status?: number
}

/**
 * The base of every error the package throws or reports. Errors thrown (by constructors and calls)
 * are about your input; errors reported through `'error'` events carry the `messages` concerned.
 * Match on `code` (or the `is*` guards), which survives two bundled copies of the package where
 * `instanceof` does not.
 */
export class AnalyticsError extends Error {
  /** What kind of error this is; stable across versions. */
  readonly code: ErrorCode
  /** The messages this error concerns, for errors reported through the `'error'` event. */
  messages: readonly unknown[]
  /** The HTTP status that caused it, where an answer did. */
  readonly status?: number

  constructor(code: ErrorCode, message: string, options: AnalyticsErrorOptions = {}) {
    // `Error` reads `cause` only: a given `cause` is kept (an undefined one too), none is added otherwise.
    super(message, options)
    this.name = 'AnalyticsError'
    this.code = code
    this.messages = options.messages ?? []
    this.status = options.status
  }
}

/** An option or configuration value is invalid. Thrown by constructors, and by `on()`/`off()`. */
export class ConfigError extends AnalyticsError {
  /** The option (or configuration path) at fault. */
  readonly option: string
  constructor(option: string, message: string) {
    super('CONFIG', message)
    this.name = 'ConfigError'
    this.option = option
  }
}

/** A call's message is missing a field, has a mistyped one, or cannot be serialised. */
export class ValidationError extends AnalyticsError {
  /** The field at fault, as a path (`properties.tags`), or `message` for the message itself. */
  readonly field: string
  constructor(field: string, message: string, options: AnalyticsErrorOptions = {}) {
    super('VALIDATION', message, options)
    this.name = 'ValidationError'
    this.field = field
  }
}

/** A message serialises to more than the per-message byte limit. */
export class MessageTooLargeError extends AnalyticsError {
  /** The message's size, in bytes of JSON. */
  readonly size: number
  /** The limit it broke, in bytes. */
  readonly limit: number
  constructor(size: number, limit: number) {
    super('MESSAGE_TOO_LARGE', `Message is ${size} bytes as JSON; the limit is ${limit} bytes.`)
    this.name = 'MessageTooLargeError'
    this.size = size
    this.limit = limit
  }
}

/** A call was made after `close()`. */
export class ClientClosedError extends AnalyticsError {
  constructor(call: string) {
    super('CLIENT_CLOSED', `Cannot call ${call}() after close().`)
    this.name = 'ClientClosedError'
  }
}

/** The server answered with a status that is not a success. */
export class HttpError extends AnalyticsError {
  declare readonly status: number
  /** The server's `Retry-After`, in ms, as honoured (capped), when it sent one. */
  readonly retryAfterMs?: number
  /** The server's own reason (its JSON `message`), at most 200 characters, when it gave one. */
  readonly reason?: string
  constructor(
    status: number,
    message: string,
    options: AnalyticsErrorOptions & { retryAfterMs?: number; reason?: string } = {},
  ) {
    super('HTTP', message, { ...options, status })
    this.name = 'HttpError'
    this.retryAfterMs = options.retryAfterMs
    this.reason = options.reason
  }
}

/** The request never got an answer: DNS, refused or reset connection, and the like. */
export class NetworkError extends AnalyticsError {
  constructor(message: string, options: AnalyticsErrorOptions = {}) {
    super('NETWORK', message, options)
    this.name = 'NetworkError'
  }
}

/** One attempt took longer than its timeout. */
export class TimeoutError extends AnalyticsError {
  constructor(ms: number, options: AnalyticsErrorOptions & { url?: string } = {}) {
    const where = options.url === undefined ? '' : `Request to ${options.url} failed: ETIMEDOUT: `
    super('TIMEOUT', `${where}${where ? 'n' : 'N'}o answer within ${ms} ms.`, options)
    this.name = 'TimeoutError'
  }
}

/** A message was dropped because `maxQueueSize` messages were already held. */
export class QueueFullError extends AnalyticsError {
  constructor(limit: number, dropped = 1, options: AnalyticsErrorOptions = {}) {
    super('QUEUE_FULL', `Queue is full (maxQueueSize ${limit}); ${dropped === 1 ? 'message' : `${dropped} messages`} dropped.`, options)
    this.name = 'QueueFullError'
  }
}

/** Delivery was cut short by `close()` reaching its time bound, or by an abort signal. */
export class AbortedError extends AnalyticsError {
  constructor(message: string, options: AnalyticsErrorOptions = {}) {
    super('ABORTED', message, options)
    this.name = 'AbortedError'
  }
}

/** The peer's TLS certificate was refused (self-signed, expired, wrong host). Never retried. */
export class TlsError extends AnalyticsError {
  constructor(message: string, options: AnalyticsErrorOptions = {}) {
    super('TLS', message, options)
    this.name = 'TlsError'
  }
}

/** Why `verifyStandardWebhook` refused a request (`SignatureError.reason`). */
export type SignatureFailure =
  | 'missing-header'
  | 'bad-timestamp'
  | 'stale-timestamp'
  | 'future-timestamp'
  | 'no-matching-signature'
  | 'bad-body'

/** A webhook request whose signature is missing, wrong or too old. `reason` says which. */
export class SignatureError extends AnalyticsError {
  readonly reason: SignatureFailure
  constructor(reason: SignatureFailure, message: string) {
    super('SIGNATURE', message)
    this.name = 'SignatureError'
    this.reason = reason
  }
}

/**
 * A collector's webhook URL was disabled: every attempt to it failed for `disableAfter` ms. Reported
 * once to the collector's `onError` when it happens, and the reason each of its messages is kept
 * as failed while it stays disabled (not sent; never retried on its own).
 */
export class EndpointDisabledError extends AnalyticsError {
  /** The source whose URL it is. */
  readonly source: string
  /** The URL, credentials masked. */
  readonly url: string
  /** When it was disabled (ms since the epoch). */
  readonly disabledAt: number
  constructor(source: string, url: string, disabledAt: number, message: string) {
    super('ENDPOINT_DISABLED', message)
    this.name = 'EndpointDisabledError'
    this.source = source
    this.url = url
    this.disabledAt = disabledAt
  }
}

/** How a thrown value is quoted in a message: its `message`, else the value as a string. */
export const messageOf = (thrown: unknown): string => (thrown as Error | undefined)?.message ?? String(thrown)

const hasCode = (error: unknown, code: ErrorCode): boolean =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code

/**
 * Whether `error` is an {@link AnalyticsError} of any kind: an instance, or an `Error` with a string
 * `code` and a `messages` array (one from another copy of the package).
 */
export const isAnalyticsError = (error: unknown): error is AnalyticsError =>
  error instanceof AnalyticsError ||
  (error instanceof Error && typeof (error as { code?: unknown }).code === 'string' &&
    Array.isArray((error as { messages?: unknown }).messages))
/** Whether `e` is a {@link ConfigError}, matched on `code` (so across two bundled copies too). */
export const isConfigError = (e: unknown): e is ConfigError => hasCode(e, 'CONFIG')
/** Whether `e` is a {@link ValidationError}, matched on `code` (so across two bundled copies too). */
export const isValidationError = (e: unknown): e is ValidationError => hasCode(e, 'VALIDATION')
/** Whether `e` is a {@link MessageTooLargeError}, matched on `code` (so across two bundled copies too). */
export const isMessageTooLargeError = (e: unknown): e is MessageTooLargeError =>
  hasCode(e, 'MESSAGE_TOO_LARGE')
/** Whether `e` is a {@link ClientClosedError}, matched on `code` (so across two bundled copies too). */
export const isClientClosedError = (e: unknown): e is ClientClosedError =>
  hasCode(e, 'CLIENT_CLOSED')
/** Whether `e` is an {@link HttpError}, matched on `code` (so across two bundled copies too). */
export const isHttpError = (e: unknown): e is HttpError => hasCode(e, 'HTTP')
/** Whether `e` is a {@link NetworkError}, matched on `code` (so across two bundled copies too). */
export const isNetworkError = (e: unknown): e is NetworkError => hasCode(e, 'NETWORK')
/** Whether `e` is a {@link TimeoutError}, matched on `code` (so across two bundled copies too). */
export const isTimeoutError = (e: unknown): e is TimeoutError => hasCode(e, 'TIMEOUT')
/** Whether `e` is a {@link TlsError}, matched on `code` (so across two bundled copies too). */
export const isTlsError = (e: unknown): e is TlsError => hasCode(e, 'TLS')
/** Whether `e` is a {@link QueueFullError}, matched on `code` (so across two bundled copies too). */
export const isQueueFullError = (e: unknown): e is QueueFullError => hasCode(e, 'QUEUE_FULL')
/** Whether `e` is an {@link AbortedError}, matched on `code` (so across two bundled copies too). */
export const isAbortedError = (e: unknown): e is AbortedError => hasCode(e, 'ABORTED')
/** Whether `e` is a {@link SignatureError}, matched on `code` (so across two bundled copies too). */
export const isSignatureError = (e: unknown): e is SignatureError => hasCode(e, 'SIGNATURE')
/** Whether `e` is an {@link EndpointDisabledError}, matched on `code` (so across two bundled copies too). */
export const isEndpointDisabledError = (e: unknown): e is EndpointDisabledError => hasCode(e, 'ENDPOINT_DISABLED')
