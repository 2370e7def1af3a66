/**
 * How requests are sent: the `fetch` the user passes or the default one (the global fetch, else
 * `cross-fetch`), and where no fetch is passed on Node, `node:http` with a keep-alive pool
 * (./node-http.ts). Delivery reads answers through `HttpAnswer`, the subset of `Response` every
 * transport provides. Same browser-build guard as ./runtime.ts.
 */
import type { StopSignal } from '../transport/stop.js'
import { isNode } from './runtime.js'
import { TRANSPORT_OF_FETCH } from './transport-key.js'

/**
 * A `fetch` function, as the `fetch` option takes it: called with the URL as a string and a
 * `RequestInit`, it must resolve with a `Response` (or an object with a numeric `status` and
 * `headers.get`); anything else fails the attempt like a network error.
 */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>

export { TRANSPORT_OF_FETCH }

/** The transport behind `fetch` when it names one, else `fetch` itself. */
export function transportOf(fetch: FetchLike): Transport {
  const named = (fetch as { [TRANSPORT_OF_FETCH]?: unknown })[TRANSPORT_OF_FETCH]
  return typeof named === 'function' ? (named as Transport) : (fetch as Transport)
}

/**
 * The default fetch, looked up at call time (so a test interceptor or polyfill installed later
 * applies). `cross-fetch` is loaded only where the runtime has no `fetch`. Its specifier is a
 * plain string, so bundlers see it; the package's `browser` field maps it to nothing, so a browser
 * bundle never contains it (every browser the client supports has `fetch`).
 */
export async function defaultFetch(input: string, init?: RequestInit): Promise<Response> {
  if (typeof globalThis.fetch === 'function' || (typeof __BROWSER__ === 'boolean' && __BROWSER__)) return globalThis.fetch(input, init)
  const mod = (await import('cross-fetch')) as { default?: FetchLike }
  if (typeof mod.default !== 'function') {
    throw new TypeError('No global `fetch` here: pass the `fetch` option.')
  }
  return mod.default(input, init)
}

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
}

/** Bodies the Node transport was still writing when their answer came (a receiver may answer before reading it all). */
const writing = new WeakMap<Uint8Array, Promise<unknown>>()

/** `body` is written once `written` settles (the Node transport, when an answer came first). */
export function writingUntil(body: Uint8Array, written: Promise<unknown>): void {
  const before = writing.get(body)
  writing.set(body, before ? Promise.all([before, written]) : written)
}

/** What settles once the transport has written `body`, if an answer came before it did. */
export const stillWriting = (body: Uint8Array): Promise<unknown> | undefined => writing.get(body)

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
   * The transport reads a `Uint8Array` body only until its request settles, or, when an answer
   * came first, until `stillWriting(body)` settles: the caller may reuse the body's memory then
   * (`platformTransport()` on Node). A fetch may keep reading a body after that (the caller's own
   * fetch, a test's), so it is given bodies no one reuses.
   */
  readonly takesPooledBodies?: boolean
}


/**
 * On Node, the Node transport module, imported as soon as this module is evaluated (it is small
 * and imports only this module), so the first request never waits for it. The browser build drops
 * it (and with it every `node:` specifier). Should it fail to load (an unusual bundle), requests
 * go through fetch instead.
 */
let nodeTransport: Transport | undefined
const nodeTransportLoaded: Promise<Transport | undefined> | undefined =
  typeof __BROWSER__ === 'boolean' && __BROWSER__
    ? undefined
    : isNode()
      ? import('./node-http.js').then((mod) => (nodeTransport = mod.nodeRequest), () => undefined)
      : undefined

/**
 * The transport used when the caller passes no `fetch`: on Node, `node:http` with a keep-alive
 * pool (about a third of the CPU of the global fetch per request); elsewhere `defaultFetch`. Bun's
 * fetch is native and cheaper than its `node:http` (which is built on it), and Deno's costs the
 * same as its `node:http`, so both keep fetch (README, Performance).
 */
export function platformTransport(): Transport {
  if ((typeof __BROWSER__ === 'boolean' && __BROWSER__) || !nodeTransportLoaded) return defaultFetch as Transport
  const send = (url: string, init: TransportInit | TimedTransportInit) => {
    if (nodeTransport) return nodeTransport(url, init as TransportInit)
    return nodeTransportLoaded.then((loaded) => {
      if (loaded) return loaded(url, init as TransportInit)
      // The fetch instead is given a copy of a pooled body (see `takesPooledBodies`).
      const { body } = init
      return (defaultFetch as Transport)(url, { ...init, body: typeof body === 'string' ? body : body.slice() } as TransportInit)
    })
  }
  // Until the Node transport is loaded, requests are timed as a fetch's are (it honours a signal).
  return Object.defineProperties(send, { takesTimeout: { get: () => nodeTransport !== undefined }, takesPooledBodies: { value: true } })
}
