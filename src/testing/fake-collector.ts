/**
 * `createFakeCollector()`: msw handlers backed by a real collector (`createCollector`'s own
 * handler, forwarding off), so what the fake accepts or refuses is exactly what the collector
 * does. It records every request, every accepted batch and message, and can answer with
 * scripted replies (status, headers, delay, network error), consumed in order, to inject faults.
 */
import { HttpResponse, http, type HttpHandler } from 'msw'
import { resolveConfig } from '../collector/config.js'
import { buildCollector, type Collector } from '../collector/create-collector.js'
import type { AcceptedBatch } from '../collector/ingest/accept.js'
import type { Message } from '../collector/ingest/parse.js'
import { resolveEndpoint } from '../client/options.js'
import { unknownOption } from '../closest.js'
import { ConfigError } from '../errors.js'
import { describe, isPlainObject } from '../message/validate.js'
import { describeSecret } from '../webhooks/signature.js'

/**
 * The options of {@link createFakeCollector}, checked as the `Client` checks its own: an unknown
 * option or a bad value is a `ConfigError` naming it.
 */
export interface FakeCollectorOptions {
  /** The only write key accepted. Default: any key (a request with no key is still a 401). */
  writeKey?: string
  /**
   * Where the client sends: the same base URL as the `Client`'s `endpoint` (not ending in
   * `/v1/batch`). Default `'https://api.segment.io'`.
   */
  endpoint?: string
}

/** A scripted answer. Without `status` or `networkError`, the real handler answers after the delay. */
export interface ScriptedReply {
  /** The status to answer with, 200 to 599. */
  status?: number
  /** Headers of the answer, e.g. `{ 'Retry-After': '1' }`. */
  headers?: Record<string, string>
  /** JSON-serialised unless a string. Default `{ success: false }` for errors, `{ success: true }` for 2xx. */
  body?: unknown
  /** Wait this long (ms) before answering; a timer looked up at call time, so fake timers apply. */
  delayMs?: number
  /** Fail the request as the network would (fetch rejects). */
  networkError?: boolean
}

/** One request that reached the fake collector, as {@link FakeCollector.requests} records it. */
export interface RecordedRequest {
  /** The HTTP method. */
  method: string
  /** Path after the endpoint, e.g. `/v1/batch`. */
  path: string
  /** The request's headers, names in lower case. */
  headers: Record<string, string>
  /** The body text (decompressed when sent with gzip/deflate), `undefined` when unreadable. */
  body: string | undefined
  /** The status answered; `0` for a scripted network error. */
  status: number
  /** Whether a scripted reply answered it. */
  scripted: boolean
}

/** What {@link createFakeCollector} returns: msw handlers, what they recorded, and scripted faults. */
export interface FakeCollector {
  /** Install with `setupServer(...fake.handlers)` or `server.use(...fake.handlers)`. */
  readonly handlers: HttpHandler[]
  /** Parsed body of every accepted request: `{ batch, sentAt, context }` for `/v1/batch`. */
  readonly batches: Record<string, unknown>[]
  /** Every accepted message, validated and normalised as the collector forwards it. */
  readonly messages: Message[]
  /** Every request that reached the fake, accepted or not, scripted or not. */
  readonly requests: RecordedRequest[]
  /** The collector behind the handlers (its `stats()`, or `fetch` to call directly). */
  readonly collector: Collector
  /** Queues scripted answers for the next requests, in order (FIFO). */
  reply(...replies: ScriptedReply[]): void
  /** Forgets recorded requests, batches, messages and pending scripted replies. */
  reset(): void
}

const DEFAULT_ENDPOINT = 'https://api.segment.io'
const PATHS = ['batch', 'identify', 'track', 'page', 'screen', 'group', 'alias']

function validateReply(reply: ScriptedReply, i: number): void {
  if (typeof reply !== 'object' || reply === null) throw new TypeError(`reply #${i + 1}: expected an object { status?, headers?, delayMs?, networkError? }.`)
  if (reply.status !== undefined && (!Number.isInteger(reply.status) || reply.status < 200 || reply.status > 599)) {
    throw new TypeError(`reply #${i + 1}: expected \`status\` to be an integer from 200 to 599, got ${String(reply.status)}.`)
  }
  if (reply.delayMs !== undefined && (typeof reply.delayMs !== 'number' || !(reply.delayMs >= 0))) {
    throw new TypeError(`reply #${i + 1}: expected \`delayMs\` to be a number ≥ 0, got ${String(reply.delayMs)}.`)
  }
}

/** setTimeout looked up when called, so `vi.useFakeTimers()` applies. */
const wait = (ms: number) => new Promise<void>((resolve) => globalThis.setTimeout(resolve, ms))

async function bodyText(request: Request): Promise<string | undefined> {
  try {
    const encoding = (request.headers.get('content-encoding') ?? '').toLowerCase()
    if (request.body === null) return ''
    if (encoding === 'gzip' || encoding === 'deflate') {
      const stream = request.body.pipeThrough(new DecompressionStream(encoding) as unknown as TransformStream<Uint8Array, Uint8Array>)
      return await new Response(stream).text()
    }
    return await request.text()
  } catch {
    return undefined
  }
}

/** Statuses whose answer has no body (a Response with one cannot be made). */
const NULL_BODY = new Set([204, 205, 304])

function scriptedResponse(reply: ScriptedReply & { status: number }): Response {
  const body = reply.body ?? { success: reply.status < 300 }
  const headers = new Headers({ 'content-type': typeof body === 'string' ? 'text/plain' : 'application/json' })
  // Set, not merged: a scripted `Content-Type` replaces the default, whatever its case.
  for (const [name, value] of Object.entries(reply.headers ?? {})) headers.set(name, value)
  if (NULL_BODY.has(reply.status)) return new Response(null, { status: reply.status, headers })
  return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status: reply.status, headers })
}

/** The options checked as the Client checks its own: an unknown key, a bad `endpoint` or `writeKey` is a `ConfigError` naming it. */
function checkOptions(options: unknown): { endpoint: string; writeKey: string | undefined } {
  if (!isPlainObject(options)) throw new ConfigError('options', `Expected \`options\` to be an object { writeKey?, endpoint? }, got ${describe(options)}.`)
  for (const key of Object.keys(options)) if (key !== 'writeKey' && key !== 'endpoint') throw unknownOption('', key, ['writeKey', 'endpoint'])
  const { writeKey } = options
  if (writeKey !== undefined && (typeof writeKey !== 'string' || writeKey === '')) {
    throw new ConfigError('writeKey', `Expected \`writeKey\` to be a non-empty string, got ${describeSecret(writeKey)}.`)
  }
  return { endpoint: options.endpoint === undefined ? DEFAULT_ENDPOINT : resolveEndpoint(options.endpoint), writeKey }
}

/**
 * A fake collector for tests, as msw handlers for `${endpoint}/v1/batch` and the single calls. The
 * real collector's handler answers (so what it accepts or refuses is what the collector does,
 * forwarding off); every request, batch and message is recorded, and
 * {@link FakeCollector.reply} scripts faults. Needs `msw` (a peer dependency) installed.
 *
 * @throws `ConfigError` for an unknown option, a bad `endpoint` or an empty `writeKey`.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node'
 * import { expect } from 'vitest'
 * import { createFakeCollector } from 'isomorphic-analytics/testing'
 * import { Client } from 'isomorphic-analytics'
 *
 * const fake = createFakeCollector()
 * const server = setupServer(...fake.handlers)
 * server.listen({ onUnhandledRequest: 'error' })
 *
 * const client = new Client('test-key')
 * client.track({ userId: 'user-1', event: 'Signed Up' })
 * await client.flush()
 * expect(fake.messages).toMatchObject([{ type: 'track', event: 'Signed Up' }])
 * fake.reply({ status: 503 }, { networkError: true }) // the next two requests fail so
 * ```
 */
export function createFakeCollector(input: FakeCollectorOptions = {}): FakeCollector {
  const options = checkOptions(input)
  const { endpoint } = options
  const prefix = new URL(endpoint).pathname.replace(/\/+$/, '')
  const batches: Record<string, unknown>[] = []
  const messages: Message[] = []
  const requests: RecordedRequest[] = []
  let replies: ScriptedReply[] = []
  /** Bumped by reset(): a request that began before it records nothing after it. */
  let generation = 0
  /** messageIds accepted since the last reset: a retry's repeat is not forwarded again. */
  let seen = new Set<string>()

  const makeCollector = () => {
    const mine = generation
    const onAccepted = (accepted: AcceptedBatch) => {
      if (mine !== generation) return
      batches.push(accepted.body)
      // As the collector forwards them: a messageId already accepted is a duplicate.
      for (const message of accepted.messages) {
        const id = message.messageId as string
        if (seen.has(id)) continue
        seen.add(id)
        messages.push(message)
      }
    }
    return buildCollector(
      resolveConfig({ sources: [{ writeKey: options.writeKey ?? 'fake-collector', name: 'fake' }], debug: false }),
      { anyWriteKey: options.writeKey === undefined, onAccepted },
    )
  }
  let collector = makeCollector()

  const resolver = async ({ request }: { request: Request }) => {
    const url = new URL(request.url)
    const path = url.pathname.slice(prefix.length) || '/'
    // The collector of the test this request began in (a reset() during its delay starts another).
    const target = collector
    const record: RecordedRequest = {
      method: request.method,
      path,
      // Lower-case names in every environment (happy-dom's Headers keeps the sender's case).
      headers: Object.fromEntries([...request.headers.entries()].map(([name, value]) => [name.toLowerCase(), value])),
      body: await bodyText(request.clone()),
      status: 0,
      scripted: false,
    }
    requests.push(record)
    const reply = replies.shift()
    if (reply?.delayMs) await wait(reply.delayMs)
    if (reply?.networkError) {
      record.scripted = true
      return HttpResponse.error()
    }
    if (reply?.status !== undefined) {
      record.scripted = true
      record.status = reply.status
      return scriptedResponse(reply as ScriptedReply & { status: number })
    }
    // The collector routes on the path; an endpoint with a path prefix is mounted at its root.
    const forwarded = new Request(new URL(`${path}${url.search}`, 'http://fake-collector.local'), {
      method: request.method,
      headers: request.headers,
      body: request.body,
      duplex: 'half',
    } as RequestInit)
    const response = await target.fetch(forwarded)
    record.status = response.status
    return response
  }

  return {
    handlers: PATHS.map((name) => http.post(`${endpoint}/v1/${name}`, resolver)),
    batches,
    messages,
    requests,
    get collector() {
      return collector
    },
    reply(...next) {
      next.forEach(validateReply)
      replies.push(...next)
    },
    reset() {
      generation++
      batches.length = 0
      messages.length = 0
      requests.length = 0
      replies = []
      seen = new Set()
      collector = makeCollector()
    },
  }
}
