/**
 * `isomorphic-analytics/collector`: the ingest service. `createCollector(config).fetch` is a
 * fetch-style handler that runs unchanged on Node, Bun, Deno and workers; `startServer` and
 * `createRequestListener` run it on Node (`node:http` is loaded only when `startServer` is called).
 *
 * @packageDocumentation
 * @module isomorphic-analytics/collector
 */
export {
  createCollector,
  type Collector,
  type CollectorStats,
  type DrainReport,
} from './create-collector.js'
export type {
  CollectorConfig,
  SourceConfig,
  SourceWebhooksConfig,
  WebhookUrlConfig,
} from './config.js'
export type { SavedIf, SettingsStore, SourceView } from './console/settings.js'
export type { AudienceSyncRequest, DeletionRequest, Dispatch } from './admin/requests.js'
export { AudienceBusyError } from './state/memberships.js'
export type { AcceptedBatch } from './ingest/accept.js'
export type { EndpointView, HealthState } from './health/record.js'
export { integrationEnabled, WEBHOOKS_INTEGRATION } from './ingest/routing.js'
export { HttpProblem, type HttpErrorCode } from './http/errors.js'
export { nodeFetch, startServer, type CollectorServer, type NodeServerLike, type ServerOptions } from './server/server.js'
export { createRequestListener, type FetchHandler, type NodeRequestLike, type NodeResponseLike, type RequestListenerOptions } from './server/node-listener.js'
export {
  AnalyticsError,
  ClientClosedError,
  ConfigError,
  ValidationError,
  MessageTooLargeError,
  EndpointDisabledError,
  isAnalyticsError,
  isEndpointDisabledError,
  isConfigError,
  isValidationError,
  type ErrorCode,
} from '../errors.js'
