/**
 * A configured source at run time: its name, write key and, when its Webhooks destination is
 * enabled, that destination (which the delivery queue feeds).
 */
import { ConfigError, isConfigError } from '../errors.js'
import type { WebhookDestination } from '../webhooks/index.js'
import { collectorDestination, type UrlGate } from '../webhooks/destination.js'
import { resolveDestinationOptions } from '../webhooks/options.js'
import type { ResolvedConfig, ResolvedSource, SourceWebhooksConfig } from './config.js'
import type { TrackingPlan } from './ingest/tracking-plan.js'
import { publicOnly } from './delivery/public-only.js'

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
 * A disabled destination's settings (`configured`) are checked by the same rules: they are shown
 * in the console and may be turned on at any time, so a bad secret or URL kept while it is off
 * would otherwise surface only later, far from where it was set.
 */
export function createSourceRuntime(
  source: ResolvedSource,
  index: number,
  config: ResolvedConfig,
  /** Settings set through the console or the admin API: their URLs reach public addresses only (but the config's own). */
  fromConsole = false,
  /** Each source's endpoint health (./health/endpoint-health.ts): what its destination asks and tells. */
  gates?: (source: string) => UrlGate,
): SourceRuntime {
  const { webhooks, trackingPlan } = source
  if (webhooks === undefined) {
    if (source.configured !== undefined) checkDisabled(source.configured, index)
    return { name: source.name, writeKey: source.writeKey, destination: undefined, trackingPlan }
  }
  const fetch = fromConsole && !config.allowPrivateWebhookUrls ? publicOnly(config.fetch, configuredUrls(config, index)) : config.fetch
  const destination = underSource(index, () => collectorDestination({ ...webhooks, ...(fetch && { fetch }) }, gates?.(source.name)))
  return { name: source.name, writeKey: source.writeKey, destination, trackingPlan }
}

/** The URLs of source `index` in the config (or `createCollector`'s options): trusted, whatever they reach. */
export function configuredUrls(config: ResolvedConfig, index: number): ReadonlySet<string> {
  return new Set((config.sources[index]?.configured?.urls ?? []).map((u) => u.url))
}

/**
 * A URL standing in for a disabled destination that has none: the destination's rules need at
 * least one, while an off destination may have none. Nothing is ever sent to it.
 */
const PLACEHOLDER_URL = { url: 'https://disabled.invalid/' }

function checkDisabled(configured: SourceWebhooksConfig, index: number): void {
  const { urls, sharedSecret, standardSecrets, timeout, retryWindow } = configured
  const checked = { urls: urls === undefined || urls.length === 0 ? [PLACEHOLDER_URL] : urls, sharedSecret, standardSecrets, timeout, retryWindow }
  underSource(index, () => resolveDestinationOptions(checked))
}

/** Runs `build`, re-throwing the destination's `ConfigError` under `sources[index].webhooks`. */
function underSource<T>(index: number, build: () => T): T {
  try {
    return build()
  } catch (error) {
    if (!isConfigError(error)) throw error
    const option = `sources[${index}].webhooks.${error.option}`
    // The destination's option paths named in the message (`urls[2].url` repeats `urls[0].url`).
    const message = error.message.replace(/`((?:urls|sharedSecret|standardSecrets|timeout|retryWindow)(?:\[[^`]*|\.[^`]*)?)`/g, (_match, name: string) => `\`sources[${index}].webhooks.${name}\``)
    throw new ConfigError(option, message.includes(option) ? message : `${option}: ${message}`)
  }
}
