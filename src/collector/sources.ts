/**
 * A configured source at run time: its name, write key and, when its Webhooks destination is
 * enabled, that destination (which the delivery queue feeds).
 */
import { ConfigError, isConfigError } from '../errors.js'
import { WebhookDestination } from '../webhooks/index.js'
import type { ResolvedConfig, ResolvedSource } from './config.js'
import type { TrackingPlan } from './ingest/tracking-plan.js'

export interface SourceRuntime {
  readonly name: string
  readonly writeKey: string
  /** `undefined` when the source's Webhooks destination is not enabled. Replaced when settings change (console). */
  destination: WebhookDestination | undefined
  /** `undefined` when the source has no tracking plan. */
  readonly trackingPlan: TrackingPlan | undefined
}

/**
 * Builds one destination per source. The URL, header and secret rules are the destination's own;
 * its `ConfigError` is re-thrown naming the source's option path (`sources[0].webhooks.urls[1].url`).
 */
export function createSourceRuntime(
  source: ResolvedSource,
  index: number,
  config: ResolvedConfig,
): SourceRuntime {
  const { webhooks, trackingPlan } = source
  if (webhooks === undefined) return { name: source.name, writeKey: source.writeKey, destination: undefined, trackingPlan }
  let destination: WebhookDestination
  try {
    destination = new WebhookDestination({ ...webhooks, ...(config.fetch && { fetch: config.fetch }) })
  } catch (error) {
    if (!isConfigError(error)) throw error
    const option = `sources[${index}].webhooks.${error.option}`
    const message = error.message.replace(/`([^`]*)`/g, (match, name: string) => (name === error.option ? `\`${option}\`` : match))
    throw new ConfigError(option, message.includes(option) ? message : `${option}: ${message}`)
  }
  return { name: source.name, writeKey: source.writeKey, destination, trackingPlan }
}
