/**
 * Endpoint health over the admin API (with the console's token):
 *
 * - `GET  /v1/admin/endpoints`         each enabled destination's URLs with their health
 * - `POST /v1/admin/endpoints/enable`  `{ source, url, replay? }`: enables a disabled URL again;
 *                                      with `replay: true` its messages kept as failed while it
 *                                      was disabled are retried by hand (each as the console's
 *                                      retry button would)
 */
import { maskUrl } from '../../secrets.js'
import { HttpProblem, jsonResponse, methodNotAllowed, notFound } from '../http/errors.js'
import { readBodyText } from '../http/read-body.js'
import { parseJson } from '../ingest/parse.js'
import { isPlainObject } from '../../message/validate.js'
import { NOT_SENT, type EndpointHealth } from '../health/endpoint-health.js'
import type { SourceRuntime } from '../sources.js'
import type { ConsoleRecorder, MessageRecord } from './recorder.js'

export interface HealthContext {
  health: EndpointHealth
  sources: readonly SourceRuntime[]
  recorder: ConsoleRecorder
  /** The console's retry by hand of a failed message (an `HttpProblem` says why it cannot). */
  retry(id: string): Promise<void>
}

/** Every URL of every enabled destination, as [source, url]. */
const endpointsOf = (sources: readonly SourceRuntime[]) => sources.flatMap((s) => (s.destination?.urls ?? []).map((url) => [s.name, url] as const))

const bad = (field: string, message: string) => new HttpProblem(400, 'BAD_REQUEST', message, { field })

/** The configured URL `given` names (as configured, or masked as listed), of `source`. */
function urlOf(context: HealthContext, body: Record<string, unknown>): [SourceRuntime, string] {
  const { source: name, url, replay } = body
  if (typeof name !== 'string' || name === '') throw bad('source', `Expected \`source\` to be a source's name, got ${JSON.stringify(name) ?? 'none'}.`)
  if (typeof url !== 'string' || url === '') throw bad('url', `Expected \`url\` to be one of the source's webhook URLs, got ${JSON.stringify(url) ?? 'none'}.`)
  if (replay !== undefined && typeof replay !== 'boolean') throw bad('replay', `Expected \`replay\` to be a boolean, got ${JSON.stringify(replay)}.`)
  const source = context.sources.find((s) => s.name === name)
  if (source === undefined) throw bad('source', `Unknown source ${JSON.stringify(name)}; known: ${context.sources.map((s) => s.name).join(', ')}.`)
  const found = source.destination?.urls.find((u) => u === url || maskUrl(u) === url)
  if (found === undefined) throw notFound('/v1/admin/endpoints/enable', `Source "${name}" has no webhook URL ${JSON.stringify(maskUrl(url))} (its destination's URLs: ${(source.destination?.urls ?? []).map(maskUrl).join(', ') || 'none, it is off'}).`)
  return [source, found]
}

/** Whether `record` failed because `url` was disabled when it was attempted last. */
function missed(record: MessageRecord, source: string, url: string): boolean {
  if (record.source !== source || record.delivery.outcome !== 'failed') return false
  const last = record.delivery.attempts.at(-1)
  return last?.results.some((r) => r.url === url && r.error?.startsWith(NOT_SENT) === true) ?? false
}

/** Retries by hand each message `url` missed while disabled (still in the console's record): how many were, and were not. */
async function replayMissed(context: HealthContext, source: string, url: string): Promise<{ replayed: number; notReplayed: number }> {
  const ids = context.recorder.changedSince(0).filter((r) => missed(r, source, url)).map((r) => r.id)
  let replayed = 0
  for (const id of ids) {
    try {
      await context.retry(id)
      replayed++
    } catch (error) {
      // Retried meanwhile by someone else, or too large to share: the others go on.
      if (!(error instanceof HttpProblem)) throw error
    }
  }
  return { replayed, notReplayed: ids.length - replayed }
}

export async function handleHealthEndpoint(request: Request, path: string, context: HealthContext): Promise<Response> {
  if (path === '/v1/admin/endpoints') {
    if (request.method !== 'GET') throw methodNotAllowed(request.method, path, 'GET')
    return jsonResponse(200, { endpoints: await context.health.list(endpointsOf(context.sources)) })
  }
  if (path !== '/v1/admin/endpoints/enable') throw notFound(path)
  if (request.method !== 'POST') throw methodNotAllowed(request.method, path, 'POST')
  const { value: body } = parseJson(await readBodyText(request))
  if (!isPlainObject(body)) throw bad('body', 'Expected a JSON object { source, url, replay? }.')
  const [source, url] = urlOf(context, body)
  const wasDisabled = await context.health.enable(source.name, url)
  const replay = body.replay === true ? await replayMissed(context, source.name, url) : undefined
  const [endpoint] = await context.health.list([[source.name, url]])
  return jsonResponse(200, { success: true, wasDisabled, endpoint, ...replay })
}
