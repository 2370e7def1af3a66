/**
 * `isomorphic-analytics/webhooks`: the forwarded payload and its types, signing and verification,
 * a fetch-style receiver, delivery to up to five URLs, and audience syncs. Web-standard globals
 * only (fetch, TextEncoder, AbortController, timers): it runs in Node, Bun, Deno, browsers,
 * workers and edge runtimes.
 *
 * @packageDocumentation
 * @module isomorphic-analytics/webhooks
 */
export {
  toWebhookPayload,
  WEBHOOK_EVENT_TYPES,
  type AliasWebhookPayload,
  type CollectedMessage,
  type DeleteWebhookPayload,
  type DeletionRequest,
  type GroupWebhookPayload,
  type IdentifyWebhookPayload,
  type PageWebhookPayload,
  type ScreenWebhookPayload,
  type TrackWebhookPayload,
  type WebhookEventType,
  type WebhookInput,
  type WebhookPayload,
  type WebhookPayloadOf,
} from './payload.js'
export { sign, verifySignature, SIGNATURE_HEADER, type RawBody } from './signature.js'
export { verifyStandardWebhook, type HeadersLike, type VerifyStandardOptions } from './standard.js'
export {
  createWebhookHandler,
  type WebhookHandler,
  type WebhookHandlerOptions,
} from './handler.js'
export { WebhookDestination } from './destination.js'
export type { DeliveryResult, WebhookDestinationEvents } from './results.js'
export type { AttemptOutcome, AttemptTarget, UrlResult } from './attempt.js'
export {
  MAX_WEBHOOK_URLS,
  WEBHOOK_DEFAULTS,
  WEBHOOK_USER_AGENT,
  type WebhookDestinationOptions,
  type WebhookUrl,
} from './options.js'
export { audienceSync, snakeCase, type AudienceSyncOptions } from './audience.js'
export {
  AbortedError,
  AnalyticsError,
  ClientClosedError,
  ConfigError,
  HttpError,
  NetworkError,
  TimeoutError,
  TlsError,
  SignatureError,
  ValidationError,
  isAnalyticsError,
  isSignatureError,
  type SignatureFailure,
  isConfigError,
  isHttpError,
  isValidationError,
  type ErrorCode,
} from '../errors.js'
