/**
 * How requests are sent: the `fetch` the user passes or the default one (the global fetch, else
 * `cross-fetch`), and where no fetch is passed on Node, `node:http` with a keep-alive pool
 * (./node-http.ts). Delivery reads answers through `HttpAnswer`, the subset of `Response` every
 * transport provides. Server runtimes only (./server.ts): the browser and worker builds send with
 * the global fetch (./web.ts `globalFetch`).
 */
import type { FetchLike, TimedTransportInit, Transport, TransportInit } from '../transport/types.js'
import { isNode } from './server-runtime.js'
import { TRANSPORT_OF_FETCH } from './transport-key.js'

export type { FetchLike, HttpAnswer, TimedTransportInit, Transport, TransportInit } from '../transport/types.js'

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
  if (typeof globalThis.fetch === 'function') return globalThis.fetch(input, init)
  const mod = (await import('cross-fetch')) as { default?: FetchLike }
  if (typeof mod.default !== 'function') {
    throw new TypeError('No global `fetch` here: pass the `fetch` option.')
  }
  return mod.default(input, init)
}

/**
 * On Node, the Node transport module, imported as soon as this module is evaluated (it is small
 * and imports nothing that imports this module), so the first request never waits for it. The
 * browser and worker builds never import this module (nor any `node:` specifier). Should it fail
 * to load (an unusual bundle), requests go through fetch instead.
 */
let nodeTransport: Transport | undefined
const nodeTransportLoaded: Promise<Transport | undefined> | undefined = isNode()
  ? import('./node-http.js').then((mod) => (nodeTransport = mod.nodeRequest), () => undefined)
  : undefined

/**
 * The transport used when the caller passes no `fetch`: on Node, `node:http` with a keep-alive
 * pool (about a third of the CPU of the global fetch per request); elsewhere `defaultFetch`. Bun's
 * fetch is native and cheaper than its `node:http` (which is built on it), and Deno's costs the
 * same as its `node:http`, so both keep fetch (README, Performance).
 */
export function platformTransport(): Transport {
  if (!nodeTransportLoaded) return defaultFetch as Transport
  const send = (url: string, init: TransportInit | TimedTransportInit) => {
    if (nodeTransport) return nodeTransport(url, init as TransportInit)
    return nodeTransportLoaded.then(async (loaded) => {
      // Answered through a fetch's path (not `takesTimeout` yet), which keeps only a refusal's
      // status, headers and text: the answer is given once the body is written (`written`).
      if (loaded) {
        const answer = await loaded(url, init as TransportInit)
        await answer.written
        return answer
      }
      // The fetch instead is given a copy of a pooled body (see `takesPooledBodies`).
      const { body } = init
      return (defaultFetch as Transport)(url, { ...init, body: typeof body === 'string' ? body : body.slice() } as TransportInit)
    })
  }
  // Until the Node transport is loaded, requests are timed as a fetch's are (it honours a signal).
  return Object.defineProperties(send, { takesTimeout: { get: () => nodeTransport !== undefined }, takesPooledBodies: { value: true } })
}
