/**
 * Shared harness for client tests: an msw server at the wire (unhandled requests are errors), a
 * recorder of every request the collector endpoint receives, and `createTestClient(overrides)`,
 * which makes a client pointed at it and closes it after the test.
 */
import { http, HttpResponse, type HttpResponseResolver } from 'msw'
import { setupServer } from 'msw/node'
import { afterAll, afterEach, beforeAll, vi } from 'vitest'
import { Client, type ClientOptions } from '../../src/index.js'
import type { SentMessage } from '../../src/message/types.js'

export const ENDPOINT = 'https://collector.test'
export const BATCH_URL = `${ENDPOINT}/v1/batch`
export const WRITE_KEY = 'test-write-key'

export const server = setupServer()

/** A message as parsed from a request body: JSON, so loosely typed. */
export type WireMessage = Record<string, unknown> & {
  type: string
  messageId: string
  timestamp: string
  context: Record<string, unknown> & { library: { name: string; version: string } }
  userId?: string
  properties?: Record<string, unknown>
}

/** One request as the server received it. */
export interface Received {
  /** The raw body text (for JSON bodies) exactly as sent. */
  text: string
  bytes: Uint8Array
  headers: Headers
  body: { batch: WireMessage[]; sentAt: string; context: { library: { name: string; version: string } }; writeKey?: string }
}

export interface Recorder {
  requests: Received[]
  /** Every message in every received request, in order. */
  messages(): WireMessage[]
}

/** A request handler's answer, chosen per request; default 200 `{"success":true}`. */
export type Responder = (request: Received, index: number) => Response | Promise<Response>

const ok = () => HttpResponse.json({ success: true })

/**
 * Installs a `/v1/batch` handler that records each request (parsed JSON body, raw text, headers)
 * and answers with `respond` (default 200).
 */
export function collector(respond: Responder = ok): Recorder {
  const requests: Received[] = []
  const resolver: HttpResponseResolver = async ({ request }) => {
    const bytes = new Uint8Array(await request.arrayBuffer())
    const gzipped = request.headers.get('content-encoding') === 'gzip'
    const text = gzipped ? '' : new TextDecoder().decode(bytes)
    const received: Received = { text, bytes, headers: request.headers, body: gzipped ? (undefined as never) : JSON.parse(text) }
    requests.push(received)
    return respond(received, requests.length - 1)
  }
  server.use(http.post(BATCH_URL, resolver))
  return {
    requests,
    messages: () => requests.flatMap((r) => r.body?.batch ?? []),
  }
}

const clients: Client[] = []

/** A client pointed at the test collector, with test-friendly defaults; closed after each test. */
export function createTestClient(overrides: ClientOptions = {}): Client {
  const client = new Client(WRITE_KEY, { endpoint: ENDPOINT, debug: false, ...overrides })
  clients.push(client)
  return client
}

/** Collects what a client emits. */
export function listen(client: Client) {
  const events = {
    flush: [] as Array<{ messages: SentMessage[]; status: number }>,
    retry: [] as Array<{ messages: SentMessage[]; attempt: number; error: Error & { code: string } }>,
    error: [] as Array<Error & { messages: readonly unknown[]; status?: number; code: string }>,
  }
  client.on('flush', (e) => events.flush.push(e))
  client.on('retry', (e) => events.retry.push(e))
  client.on('error', (e) => events.error.push(e))
  return events
}

/** A minimal valid track call. */
export const trackInput = (i = 0, extra: Record<string, unknown> = {}) => ({
  event: `Event ${i}`,
  userId: `user-${i}`,
  ...extra,
})

/** Settles `promise` while advancing fake timers in steps, up to `maxMs` of fake time. */
export async function settle<T>(promise: Promise<T>, maxMs = 600_000, stepMs = 100): Promise<T> {
  let done = false
  let value: T
  let failure: unknown
  let failed = false
  promise.then(
    (v) => { done = true; value = v },
    (e) => { done = true; failed = true; failure = e },
  )
  for (let elapsed = 0; !done && elapsed <= maxMs; elapsed += stepMs) {
    await vi.advanceTimersByTimeAsync(stepMs)
  }
  if (!done) throw new Error(`promise did not settle within ${maxMs} ms of fake time`)
  if (failed) throw failure
  return value!
}

export function installServer(): void {
  beforeAll(() => server.listen({ onUnhandledRequest: 'error' }))
  afterEach(async () => {
    // Teardown only: whatever a test left queued goes to a silent sink, and close(0) unsubscribes
    // the client's exit hooks at once and aborts anything left.
    server.use(http.post(BATCH_URL, () => HttpResponse.json({ success: true })))
    const closing = clients.splice(0).map((c) => c.close(0).catch(() => undefined))
    if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(10)
    vi.useRealTimers()
    await Promise.race([Promise.all(closing), new Promise((r) => setTimeout(r, 50))])
    server.resetHandlers()
    vi.restoreAllMocks()
    vi.unstubAllEnvs()
    vi.unstubAllGlobals()
  })
  afterAll(() => server.close())
}

export { http, HttpResponse }
