/**
 * `isomorphic-analytics`: the `Client`, which queues identify, track, page, screen, group and
 * alias calls and sends them in batches, with retries, from Node, Bun, Deno, browsers, workers and
 * edge runtimes; its options, message types and errors.
 *
 * @packageDocumentation
 * @module isomorphic-analytics
 */
export { Client } from './client/client.js'
export type { ClientEvents, ClientStats, FlushResult } from './client/reports.js'
export { DEFAULTS } from './client/options.js'
export type { ClientOptions } from './client/options.js'
export type {
  AliasMessage, CommonFields, GroupMessage, Identity, IdentifyMessage, Integrations, JsonObject,
  LibraryInfo, MessageType, PageMessage, Properties, PropertyValue, ScreenMessage, SentMessage, TrackMessage,
} from './message/types.js'
export type { AnyEvents, EventSchemas, TypedGroupMessage, TypedIdentifyMessage, TypedTrackMessage } from './message/typed-calls.js'
export type { StandardIssue, StandardResult, StandardSchemaV1 } from './message/standard-schema.js'
export {
  AbortedError, AnalyticsError, ClientClosedError, ConfigError, HttpError, MessageTooLargeError,
  NetworkError, QueueFullError, TimeoutError, TlsError, ValidationError,
  isAbortedError, isAnalyticsError, isClientClosedError, isConfigError, isHttpError, isMessageTooLargeError,
  isNetworkError, isQueueFullError, isTimeoutError, isTlsError, isValidationError,
} from './errors.js'
export type { ErrorCode } from './errors.js'
export type { FetchLike } from './platform/transport.js'
