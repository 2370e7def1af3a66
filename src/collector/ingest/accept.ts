/**
 * `POST /v1/batch` and the single calls: authenticate, read and validate the body (once), and
 * hand each message that goes to the source's Webhooks destination to the delivery queue as the
 * exact text to forward (serialised once, here). The queue takes a request's deliveries as a
 * unit or refuses them all (503 with Retry-After: the sender retries later); 200 is answered only
 * once the queue holds them.
 */
import type { Logger } from '../../logger.js'
import { payloadOfValidMessage } from '../../webhooks/payload.js'
import type { DeliveryQueue, QueuedDelivery } from '../delivery/queue.js'
import { missingWriteKey, unknownWriteKey, writeKeyFromBody, writeKeyFromHeader } from '../http/auth.js'
import { corsHeaders } from '../http/cors.js'
import { HttpProblem, jsonResponse } from '../http/errors.js'
import { readBodyText } from '../http/read-body.js'
import type { SourceRuntime } from '../sources.js'
import type { IngestTally } from '../stats.js'
import { extractMessages, parseJson, type BodyKind, type Message } from './parse.js'
import { integrationEnabled } from './routing.js'

/** A batch (or single call) the collector accepted. */
export interface AcceptedBatch {
  source: string
  /** The parsed request body, as sent. */
  body: Record<string, unknown>
  /** Its messages, validated and normalised (what is forwarded). */
  messages: Message[]
}

export interface IngestContext {
  lookup(writeKey: string): SourceRuntime | undefined
  queue: DeliveryQueue
  tally: IngestTally
  log: Logger
  onAccepted?: (batch: AcceptedBatch) => void
}

const CONTENT_TYPE = /^(?:application\/json|text\/plain)(?:\s*;\s*(.*))?$/i

function checkContentType(request: Request): void {
  const header = request.headers.get('content-type')
  if (header === null || header.trim() === '') return
  const match = CONTENT_TYPE.exec(header.trim())
  const charset = match?.[1] ? /charset\s*=\s*"?([^";\s]+)/i.exec(match[1])?.[1] : undefined
  if (!match || (charset !== undefined && !/^utf-?8$/i.test(charset))) {
    throw new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Type ${JSON.stringify(header)} is not accepted; send application/json or text/plain (UTF-8).`)
  }
}

export function backlogFull(source: string): HttpProblem {
  return new HttpProblem(503, 'BACKLOG_FULL', `Too many deliveries pending for source "${source}"; retry later.`, {
    headers: { 'retry-after': '5' },
  })
}

export function createIngest(context: IngestContext): (kind: BodyKind, request: Request) => Promise<Response> {
  return async function ingest(kind, request) {
    checkContentType(request)
    const headerKey = writeKeyFromHeader(request)
    let source = headerKey === undefined ? undefined : context.lookup(headerKey)
    if (headerKey !== undefined && source === undefined) throw unknownWriteKey()
    const body = parseJson(await readBodyText(request))
    if (source === undefined) {
      const key = writeKeyFromBody(body)
      if (key === undefined) throw missingWriteKey()
      source = context.lookup(key)
      if (source === undefined) throw unknownWriteKey()
    }
    const messages = extractMessages(kind, body, new Date().toISOString())
    const deliveries: QueuedDelivery[] = []
    if (source.destination !== undefined) {
      for (const message of messages) {
        if (!integrationEnabled(message.integrations)) continue
        deliveries.push({ source: source.name, type: message.type, body: JSON.stringify(payloadOfValidMessage(message)) })
      }
      const held = context.queue.enqueue(deliveries)
      if (!(typeof held === 'boolean' ? held : await held)) throw backlogFull(source.name)
    }
    context.tally.accepted(source.name, messages.length, deliveries.length)
    if (context.log.enabled) context.log(`${source.name}: accepted ${messages.length} message(s), forwarding ${deliveries.length}`)
    context.onAccepted?.({ source: source.name, body: body as Record<string, unknown>, messages })
    return jsonResponse(200, { success: true }, corsHeaders(request))
  }
}
