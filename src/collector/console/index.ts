/**
 * The console as the collector sees it: `GET /console` and its assets (a page saying how to
 * enable it when there is no admin token), the console's admin endpoints under `/v1/admin/`, and
 * `createConsole`, which ties the recorder, the settings and manual retries to the sources and
 * the delivery queue (and, with a queue server, to the other processes' consoles: shared.ts).
 */
import type { AdminGuard } from '../admin/guard.js'
import type { ResolvedConfig } from '../config.js'
import type { DeliveryQueue } from '../delivery/queue.js'
import type { RequestHead } from '../http/direct.js'
import { HttpProblem, methodNotAllowed, notFound } from '../http/errors.js'
import { configuredUrls, createSourceRuntime, type SourceRuntime } from '../sources.js'
import { refusedHost } from '../../webhooks/public-address.js'
import type { UrlGate } from '../../webhooks/destination.js'
import type { EndpointHealth } from '../health/endpoint-health.js'
import type { MembershipStore } from '../state/memberships.js'
import { handleConsoleEndpoint, type ConsoleContext } from './endpoints.js'
import { consoleAsset } from './page.js'
import type { RetriesByHand } from './retries.js'
import type { ConsoleRecorder } from './recorder.js'
import { SourceSettings, type SettingsStore } from './settings.js'
import type { SharedConsole } from './shared.js'
import { MessageStreams } from './stream.js'

export type { ConsoleContext } from './endpoints.js'
export type { SavedIf, SettingsStore, SourceView } from './settings.js'
export { memorySettings } from './settings.js'
export { ConsoleRecorder } from './recorder.js'
export type { SharedConsole } from './shared.js'

/**
 * Each source's Webhooks settings, kept by `store` and applied to the sources and the queue.
 * Made for every collector (not only one with the console): a store shared by several processes
 * brings its settings to each of them. `report`: what fails in the store (default: `onError`).
 */
export function createSourceSettings(options: { config: ResolvedConfig; store: SettingsStore; sources: SourceRuntime[]; queue: DeliveryQueue; report?: (error: unknown) => void; gates?: (source: string) => UrlGate }): SourceSettings {
  const { config, store, sources, queue, gates } = options
  return new SourceSettings(
    {
      sources: config.sources.map((s) => ({ writeKey: s.writeKey, name: s.name, ...(s.configured && { webhooks: s.configured }) })),
      build: (source, index) => createSourceRuntime(source, index, config, true, gates).destination,
      refuseUrl: config.allowPrivateWebhookUrls
        ? () => undefined
        : (index, url) => (configuredUrls(config, index).has(url) ? undefined : refusedHost(url)),
      apply(index, destination) {
        const source = sources[index]
        source.destination = destination
        if (destination !== undefined) queue.setDestination(source.name, destination)
      },
    },
    store,
    options.report ?? config.onError,
  )
}

export function createConsole(options: {
  guard: AdminGuard
  /** What a retry by hand changes beyond the record (./retries.ts). */
  retries: RetriesByHand
  settings: SourceSettings
  sources: SourceRuntime[]
  queue: DeliveryQueue
  recorder: ConsoleRecorder
  /** With a queue server: the other processes' consoles. */
  shared?: SharedConsole
  /** The audiences' memberships, as their syncs leave them. */
  memberships: MembershipStore
  /** `POST /v1/admin/replay` (../replay/replay.ts). */
  replay: ConsoleContext['replay']
  /** Each URL's health. */
  health: EndpointHealth
}): ConsoleContext {
  const { settings, sources, queue, recorder, shared } = options
  const streams = new MessageStreams((listener) => recorder.subscribe(listener))
  const context: ConsoleContext = {
    guard: options.guard,
    settings,
    recorder,
    streams,
    replay: options.replay,
    health: { health: options.health, sources, recorder, retry: (id) => context.retry(id) },
    members(source, audience) {
      if (!sources.some((s) => s.name === source)) {
        throw new HttpProblem(400, 'BAD_REQUEST', `Unknown source ${JSON.stringify(source)}; known: ${sources.map((s) => s.name).join(', ')}.`, { field: 'source' })
      }
      return options.memberships.get(source, audience)
    },
    async retry(id) {
      const record = recorder.get(id)
      if (record === undefined) throw notFound(`/v1/admin/messages/${id}`, `No message ${JSON.stringify(id)} is in the console's record.`)
      if (sources.find((s) => s.name === record.source)?.destination === undefined) {
        throw new HttpProblem(409, 'CONFLICT', `Source "${record.source}" has its Webhooks destination off; turn it on to retry.`)
      }
      const traceId = recorder.traceIdOf(id)
      const { claim, unfailed } = options.retries
      if (record.delivery.outcome === 'failed' && traceId !== undefined && claim) {
        // Two admins (or tabs on two processes) retrying at once: only the first is sent.
        if (!(await claim(traceId, record.delivery.attempts.at(-1)?.attempt ?? 0))) {
          throw new HttpProblem(409, 'CONFLICT', `Message ${id} is already being retried (a retry by hand made here or through another collector process).`)
        }
      }
      const again = recorder.retryByHand(id)
      if (again === undefined) {
        throw new HttpProblem(409, 'CONFLICT', record.delivery.outcome === 'failed'
          ? `Message ${id} was accepted by another collector process and is too large to share; retry it from that process's console.`
          : `Message ${id} has not failed (its delivery is ${record.delivery.outcome}); only a failed delivery can be retried.`)
      }
      const { source, type, body, trace } = again
      // Durable: the other consoles hear of it before any process can attempt it; then it goes
      // through the queue server under the same traceId (whichever process attempts it reports it).
      if (traceId !== undefined) await shared?.retried(traceId)
      await queue.enqueue([{ source, type, body, ...(queue.durable && traceId !== undefined ? { traceId } : { trace }) }], { ignoreLimit: true })
      unfailed(source)
    },
  }
  return context
}

/**
 * The console's answer to `head`, or `undefined` when `path` is not the console's. Its admin
 * endpoints read the web `Request` (`full()`).
 */
export function routeConsole(head: RequestHead, path: string, context: ConsoleContext | undefined, full: () => Request): Promise<Response> | undefined {
  if (path === '/console' || path.startsWith('/console/')) {
    if (head.method !== 'GET' && head.method !== 'HEAD') return Promise.reject(methodNotAllowed(head.method, path, 'GET'))
    return consoleAsset(path, context !== undefined, head.headers.get('accept-encoding')).then((asset) => asset ?? Promise.reject(notFound(path)))
  }
  if (context !== undefined && path.startsWith('/v1/admin/')) return handleConsoleEndpoint(full(), path, context)
  return undefined
}
