/**
 * What a transport is: one request, a fetch's or `nodeRequest`'s (src/platform/node-http.ts), and
 * the answer it resolves with. Types only, shared by the client's delivery, the webhooks, and the
 * transports themselves, so none of them imports another to learn them.
 */
import type { StopSignal } from './stop.js'

/**
 * A `fetch` function, as the `fetch` option takes it: called with the URL as a string and a
 * `RequestInit`, it must resolve with a `Response` (or an object with a numeric `status` and
 * `headers.get`); anything else fails the attempt like a network error.
 */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

/** What delivery reads from an answer: the subset of `Response` that a transport must provide. */
export interface HttpAnswer {
  readonly status: number
  readonly headers: { get(name: string): string | null }
  /**
   * The body as a stream, where the transport has one (fetch: `null` when there is none);
   * `undefined` when the transport reads the body itself (`nodeRequest`: it keeps the first 16 KiB
   * and discards the rest). Read it with `text()`.
   */
  readonly body?: ReadableStream<Uint8Array> | null
  text(): Promise<string>
  arrayBuffer(): Promise<ArrayBuffer>
  /**
   * Set by a transport that may answer before it has written the whole request body (a receiver
   * may answer before reading it all: `nodeRequest`): settles once the body is written or the
   * request is over. Until then the body's memory must not be reused.
   */
  readonly written?: Promise<unknown>
}

export interface TransportInit {
  method: string
  headers: Record<string, string>
  body: string | Uint8Array<ArrayBuffer>
  signal: AbortSignal
  redirect: 'manual'
  keepalive?: boolean
}

/**
 * What a transport that `takesTimeout` is given instead: the whole request's time limit, and the
 * caller's signal as it is (an `AbortSignal` or a client's `Stop`), if any.
 */
export interface TimedTransportInit extends Omit<TransportInit, 'signal'> {
  signal?: StopSignal
  timeoutMs: number
}

/**
 * Sends one request. A fetch is one; so is `nodeRequest` (src/platform/node-http.ts), which
 * `takesTimeout`: given `timeoutMs`, it ends the request itself when that runs out and rejects with
 * an error whose `timedOut` is true, so `attemptRequest` needs no `AbortController` and timer of
 * its own for it.
 */
export type Transport = ((url: string, init: TransportInit) => Promise<HttpAnswer>) & {
  readonly takesTimeout?: boolean
  /**
   * The transport reads a `Uint8Array` body only until its request settles, or, when its answer
   * has `written`, until that settles: the caller may reuse the body's memory then
   * (`platformTransport()` on Node). A fetch may keep reading a body after that (the caller's own
   * fetch, a test's), so it is given bodies no one reuses.
   */
  readonly takesPooledBodies?: boolean
}
