/**
 * `POST /v1/batch` (and `/v1/import`), the single calls and RudderStack's beacon form
 * (`/beacon/v1/batch?writeKey=`): authenticate, read and validate the body (once, integers beyond
 * 2^53 kept exact), and hand each message that goes to the source's Webhooks destination to the
 * delivery queue as the exact text to forward (serialised once, here). The queue takes a request's deliveries as a
 * unit or refuses them all (503 with Retry-After: the sender retries later); 200 is answered only
 * once the queue holds them.
 */
import { count, type Logger } from '../../logger.js'
import { payloadOfValidMessage } from '../../webhooks/payload.js'
import { deferredTrace, type DeferredTrace } from '../console/recorder.js'
import { QueueUnavailableError, type DeliveryQueue, type DeliveryTrace, type QueuedDelivery } from '../delivery/queue.js'
import { missingWriteKey, unknownWriteKey, writeKeyFromBody, writeKeyFromHeader, writeKeyFromQuery } from '../http/auth.js'
import { corsHeaders } from '../http/cors.js'
import { requestDeadline } from '../http/deadline.js'
import type { RequestHead } from '../http/direct.js'
import { HttpProblem, jsonAnswer, retryLater, type JsonAnswer } from '../http/errors.js'
import { readBodyText } from '../http/read-body.js'
import type { SourceRuntime } from '../sources.js'
import type { IngestTally } from '../stats.js'
import { stringifyExact } from '../../message/exact-json.js'
import type { RecentMessageIds } from './dedup.js'
import { extractMessages, parseJson, tooDeepBeside, withinMessageLimits, type BodyKind, type Message } from './parse.js'
import { integrationEnabled } from './routing.js'
import type { PlanVerdict } from './tracking-plan.js'

/** A batch (or single call) the collector accepted. */
export interface AcceptedBatch {
  /** The name of the source whose write key it came with. */
  source: string
  /** The parsed request body, as sent. */
  body: Record<string, unknown>
  /** Its messages, validated and normalised (what is forwarded). */
  messages: Message[]
  /** The messages that break the source's tracking plan (by index in `messages`), and why. */
  violations: Array<PlanVerdict & { index: number }>
}

export interface IngestContext {
  lookup(writeKey: string): SourceRuntime | undefined
  queue: DeliveryQueue
  tally: IngestTally
  /** In-memory de-duplication; absent when the queue de-duplicates (a queue server). */
  dedup: RecentMessageIds | undefined
  log: Logger
  onAccepted?: (batch: AcceptedBatch) => void
  /**
   * Durable mode with the console: names a delivery whose attempts are reported under that name
   * (any process may make them); `undefined` when it is not followed.
   */
  traceId?: () => string | undefined
  /** Records each accepted message for the console; returns the trace of its delivery. */
  record?: (source: string, message: Message, forward: { body: string } | { outcome: 'not forwarded' | 'blocked'; reason: string }) => DeliveryTrace
}

// JSON under any of these: browsers send text/plain to skip the CORS preflight, and
// RudderStack's Node SDK sends its (gzipped) JSON as application/x-www-form-urlencoded.
const CONTENT_TYPE = /^(?:application\/json|text\/plain|application\/x-www-form-urlencoded)(?:\s*;\s*(.*))?$/i

function checkContentType(request: RequestHead): void {
  const header = request.headers.get('content-type')
  if (header === null || header.trim() === '') return
  const match = CONTENT_TYPE.exec(header.trim())
  const charset = match?.[1] ? /charset\s*=\s*"?([^";\s]+)/i.exec(match[1])?.[1] : undefined
  if (!match || (charset !== undefined && !/^utf-?8$/i.test(charset))) {
    throw new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${JSON.stringify(header)} is not accepted; send JSON as application/json, text/plain or application/x-www-form-urlencoded (UTF-8).`)
  }
}

export function backlogFull(source: string): HttpProblem {
  return retryLater('BACKLOG_FULL', `Too many deliveries pending for source "${source}"; retry later.`)
}

/**
 * Records a request's messages for the console, once the queue has taken them: each delivery's
 * trace was deferred (the queue may have started it already) and is bound to its record now.
 */
function recordAll(
  record: NonNullable<IngestContext['record']>,
  source: SourceRuntime,
  messages: Message[],
  deliveries: QueuedDelivery[],
  blocked: ReadonlyMap<number, string>,
  duplicates: ReadonlySet<Message>,
): void {
  let next = 0
  for (const [i, message] of messages.entries()) {
    const reason = blocked.get(i)
    if (reason !== undefined) {
      record(source.name, message, { outcome: 'blocked', reason })
    } else if (source.destination === undefined) {
      record(source.name, message, { outcome: 'not forwarded', reason: 'the Webhooks destination is off' })
    } else if (!integrationEnabled(message.integrations)) {
      record(source.name, message, { outcome: 'not forwarded', reason: 'turned off by its `integrations`' })
    } else if (duplicates.has(message)) {
      record(source.name, message, { outcome: 'not forwarded', reason: 'a duplicate: its messageId was accepted within the last 24 hours' })
    } else {
      const delivery = deliveries[next++]
      const trace = record(source.name, message, delivery)
      ;(delivery.trace as DeferredTrace | undefined)?.bind(trace)
    }
  }
}

/** The source's tracking plan applied to each message: those that break it, and whether that blocks them. */
function checkPlan(source: SourceRuntime, messages: readonly Message[], hasBigInt: boolean, log: Logger): AcceptedBatch['violations'] {
  const plan = source.trackingPlan
  if (plan === undefined) return []
  const violations: AcceptedBatch['violations'] = []
  messages.forEach((message, index) => {
    const verdict = plan.verdict(message, hasBigInt)
    if (verdict === undefined) return
    violations.push({ index, ...verdict })
    if (log.enabled) log(`${source.name}: ${verdict.blocked ? 'blocked' : 'allowed'} ${String(message.messageId)}: ${verdict.reason}`)
  })
  return violations
}

/**
 * A write answered 503 (not taken within its 5 s) that reached the queue server afterwards: its
 * deliveries are delivered all the same, so they are counted accepted (and forwarding) then, and
 * the counters still add up: the sender's retry is accepted again, and de-duplicated at delivery.
 */
function countLanded(context: IngestContext, source: string, deliveries: number, landed: Promise<boolean>): void {
  void landed.then((written) => {
    if (!written) return
    context.tally.accepted(source, deliveries, deliveries)
    if (context.log.enabled) context.log(`${source}: ${count(deliveries, 'payload')} answered 503 reached the queue server afterwards; counted accepted, delivered from there`)
  })
}

/** How a request names its write key: Basic auth or the body, or (beacon) the query. */
export interface IngestOptions {
  keyInQuery?: boolean
}

export type Ingest = (kind: BodyKind, request: RequestHead, options?: IngestOptions) => Promise<JsonAnswer>

export function createIngest(context: IngestContext): Ingest {
  return async function ingest(kind, request, options = {}) {
    checkContentType(request)
    const headerKey = options.keyInQuery ? writeKeyFromQuery(request) : writeKeyFromHeader(request)
    let source = headerKey === undefined ? undefined : context.lookup(headerKey)
    if (headerKey !== undefined && source === undefined) throw unknownWriteKey()
    const text = await readBodyText(request)
    const { value: body, hasBigInt, inexact } = parseJson(text)
    if (source === undefined) {
      const key = writeKeyFromBody(body)
      if (key === undefined) throw missingWriteKey(request)
      source = context.lookup(key)
      if (source === undefined) throw unknownWriteKey()
    }
    const receivedAt = new Date().toISOString()
    const messages = extractMessages(kind, body, receivedAt, hasBigInt, withinMessageLimits(text, hasBigInt))
    // No message nests too deep (that is refused above, naming it): something beside them does.
    if (inexact) throw tooDeepBeside()
    const violations = checkPlan(source, messages, hasBigInt, context.log)
    const blockedAt = new Map(violations.flatMap((v) => (v.blocked ? [[v.index, v.reason] as const] : [])))
    const deliveries: QueuedDelivery[] = []
    const { record } = context
    let repeats = 0
    const duplicates = new Set<Message>()
    if (source.destination !== undefined) {
      const now = Date.now()
      /** The ids this request claimed: let go if it fails, so that the sender's retry is not a "duplicate". */
      const claimed: string[] = []
      const release = () => {
        for (const id of claimed) context.dedup?.release(source.name, id)
      }
      try {
        for (const [i, message] of messages.entries()) {
          if (blockedAt.has(i)) continue
          if (!integrationEnabled(message.integrations)) continue
          if (context.dedup && !context.dedup.claim(source.name, message.messageId as string, now)) {
            repeats++
            duplicates.add(message)
            continue
          }
          if (context.dedup) claimed.push(message.messageId as string)
          // Serialised here, where it is known whether the body held a bigint: these exact bytes
          // are queued, signed and sent.
          const traceId = context.traceId?.()
          deliveries.push({
            source: source.name,
            type: message.type,
            body: stringifyExact(payloadOfValidMessage(message), hasBigInt),
            messageId: message.messageId as string,
            // A queue server follows a delivery by its traceId only: a trace would go unused there.
            ...(traceId !== undefined ? { traceId } : record && !context.queue.durable && { trace: deferredTrace() }),
          })
        }
      } catch (error) {
        release()
        throw error
      }
      const by = requestDeadline(request)
      const held = context.queue.enqueue(deliveries, by === undefined ? undefined : { by })
      let taken: boolean
      let unavailable: QueueUnavailableError | undefined
      try {
        taken = typeof held === 'boolean' ? held : await held
      } catch (error) {
        if (!(error instanceof QueueUnavailableError)) throw error
        taken = false
        unavailable = error
      }
      if (!taken) {
        // Not taken: the sender will retry these, and the retry must not be a "duplicate".
        release()
        if (unavailable?.landed) countLanded(context, source.name, deliveries.length, unavailable.landed)
        throw unavailable === undefined
          ? backlogFull(source.name)
          : retryLater('QUEUE_UNAVAILABLE', `${unavailable.message} Retry later.`)
      }
    }
    if (record) recordAll(record, source, messages, deliveries, blockedAt, duplicates)
    context.tally.accepted(source.name, messages.length, deliveries.length + repeats, receivedAt, blockedAt.size)
    if (repeats > 0) context.tally.deduplicated(source.name, repeats)
    if (context.log.enabled) {
      context.log(`${source.name}: accepted ${count(messages.length, 'message')}, forwarding ${count(deliveries.length, 'payload')} (received at ${receivedAt})`)
    }
    context.onAccepted?.({ source: source.name, body: body as Record<string, unknown>, messages, violations })
    return jsonAnswer(200, { success: true }, corsHeaders(request))
  }
}
