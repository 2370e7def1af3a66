/**
 * `POST /v1/admin/replay` `{ source, from, to, outcome?, url? }`: the payloads of `source`
 * accepted in the window `from`…`to` (ISO 8601 dates, or ms since the epoch) that are still kept
 * (./kept.ts), failed ones only (`outcome: 'failed'`, the default) or all, delivered again: the
 * same bytes (so the same `X-Signature` and `webhook-id`), through the same queue and retry
 * policy as any delivery, to every URL of the source or to `url` only, and recorded in the
 * console as replays (`replay: true`). Answers how many are replaying, and how many of the
 * window were no longer kept.
 */
import { ValidationError } from '../../errors.js'
import { describe, isPlainObject } from '../../message/validate.js'
import { parseExact } from '../../message/exact-json.js'
import { maskUrl } from '../../secrets.js'
import type { WebhookPayload } from '../../webhooks/index.js'
import { send, type Replayed, type SendState } from '../admin/dispatch.js'
import type { SourceRuntime } from '../sources.js'
import { settlesWithin } from '../settles-within.js'
import { HttpProblem } from '../http/errors.js'
import type { KeptWindows } from './kept.js'

export interface ReplayRequest {
  /** The source's name. */
  source: string
  /** The window's start and end (inclusive): ISO 8601 dates, or ms since the epoch. */
  from: string | number
  to: string | number
  /** `failed` (default): the payloads whose delivery failed for good; `all`: every one. */
  outcome?: 'failed' | 'all'
  /** Only to this URL of the source (default: every URL). */
  url?: string
}

export interface ReplayAnswer {
  /** Payloads queued again. */
  replaying: number
  /** Payloads of the window no longer kept (past the retention, or the bound in memory). */
  unavailable: number
}

/** Payloads one replay may send at most: a larger window is refused, to be narrowed. */
export const MAX_REPLAY = 10_000
/** In memory, how long a replay's answer waits for its payloads to be queued under the backlog limit. */
const QUEUED_WAIT_MS = 5_000

const KEYS = new Set(['source', 'from', 'to', 'outcome', 'url'])
const ISO_DATE = /^\d{4}-\d\d-\d\d(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?)?$/

function time(value: unknown, field: 'from' | 'to'): number {
  const ms = typeof value === 'number' ? value : typeof value === 'string' && ISO_DATE.test(value) ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(ms) || (typeof value === 'number' && !Number.isSafeInteger(value))) {
    throw new ValidationError(field, `Expected \`${field}\` to be an ISO 8601 date (2026-11-28T09:00:00Z) or ms since the epoch, got ${describe(value)}.`)
  }
  return ms
}

/** A checked replay request: a `ValidationError` names the field that is wrong. */
export interface CheckedReplay {
  source: SourceRuntime
  from: number
  to: number
  failedOnly: boolean
  /** The index of `url` among the source's URLs, when given. */
  url?: number
}

export function checkReplay(byName: ReadonlyMap<string, SourceRuntime>, input: unknown): CheckedReplay {
  if (!isPlainObject(input)) throw new ValidationError('body', `Expected a replay request { source, from, to, outcome?, url? }, got ${describe(input)}.`)
  for (const key of Object.keys(input)) {
    if (!KEYS.has(key)) throw new ValidationError(key, `Unknown field \`${key}\`; a replay request has source, from, to, outcome and url.`)
  }
  if (typeof input.source !== 'string' || input.source.trim() === '') {
    throw new ValidationError('source', `Expected \`source\` to be a source's name, got ${describe(input.source)}.`)
  }
  const source = byName.get(input.source)
  if (source === undefined) throw new ValidationError('source', `Unknown source ${describe(input.source)}; known: ${[...byName.keys()].join(', ')}.`)
  const from = time(input.from, 'from')
  const to = time(input.to, 'to')
  if (from > to) throw new ValidationError('from', `Expected \`from\` to be no later than \`to\`, got ${new Date(from).toISOString()} after ${new Date(to).toISOString()}.`)
  const { outcome = 'failed' } = input
  if (outcome !== 'failed' && outcome !== 'all') throw new ValidationError('outcome', `Expected \`outcome\` to be "failed" or "all", got ${describe(outcome)}.`)
  if (source.destination === undefined) {
    throw new ValidationError('source', `Source "${source.name}" has its Webhooks destination off; turn it on to replay.`)
  }
  const urls = source.destination.urls
  let url: number | undefined
  if (input.url !== undefined) {
    // As given, or as the console shows it (credentials masked).
    url = typeof input.url === 'string' ? urls.findIndex((u) => u === input.url || maskUrl(u) === input.url) : -1
    if (url < 0) throw new ValidationError('url', `Expected \`url\` to be one of source "${source.name}"'s ${urls.length} URL(s), got ${describe(input.url)}.`)
  }
  return { source, from, to, failedOnly: outcome === 'failed', ...(url !== undefined && { url }) }
}

/**
 * Queues the kept payloads of the checked request again (see `send`, ../admin/dispatch.ts):
 * resolves once they are queued, with the answer's counts. With nothing kept (`kept` undefined:
 * a retention of 0), a 409.
 */
export async function replay(state: SendState, kept: KeptWindows | undefined, request: CheckedReplay): Promise<ReplayAnswer> {
  const { source, from, to, failedOnly, url } = request
  if (kept === undefined) throw new HttpProblem(409, 'CONFLICT', 'Nothing is kept for replay: the collector\'s `retention` is 0 (`--retention`); set it above 0 to keep forwarded payloads.')
  const window = await kept.window(source.name, from, to, failedOnly)
  if (window.kept.length > MAX_REPLAY) {
    throw new ValidationError('to', `The window holds ${window.kept.length} payloads to replay; at most ${MAX_REPLAY} go in one replay: narrow it.`)
  }
  const replayed = new Map<WebhookPayload, Replayed>()
  const payloads = window.kept.map((item) => {
    const payload = parseExact(item.body).value as WebhookPayload
    replayed.set(payload, { body: item.body, acceptedAt: item.at, wasFailed: item.failed, ...(url !== undefined && { urls: [url] }) })
    return payload
  })
  const dispatch = send(state, [[source, payloads]], { replay: true }, undefined, replayed)
  // In memory, a backlog at its limit is waited on in the background after 5 s (as a sync is).
  if (state.queue.durable) await dispatch.queued
  else if (!(await settlesWithin(dispatch.queued, QUEUED_WAIT_MS))) dispatch.queued.catch(() => {})
  return { replaying: payloads.length, unavailable: window.unavailable }
}
