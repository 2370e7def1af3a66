/**
 * The Node side of the collector: `startServer(collector, options)` runs it as a Node HTTP server,
 * and `nodeFetch` (src/platform/node-http.ts) delivers its webhooks over `node:http(s)`. The
 * `node:` modules are loaded when these are called (never by importing the package), so
 * `isomorphic-analytics/collector` stays importable on Bun, Deno and workers, where only
 * `createCollector(...).fetch` is used.
 *
 * It starts listening once the collector is ready (queue server connected, saved settings applied;
 * at most `READY_TIMEOUT_MS`), so no sender pays for the start-up.
 *
 * Limits: request headers at most `maxHeaderSize` bytes (431 beyond), a request must arrive
 * within `requestTimeout`. Malformed HTTP is answered 400 by the parser hook, never thrown.
 */
import type { Socket } from 'node:net'
import { guardReport } from '../guard-report.js'
import { readinessOf } from '../http/readiness.js'
import { plainHttpWarning, servesAdmin } from '../http/exposure.js'
import { settlesWithin } from '../settles-within.js'
import { createRequestListener, type FetchHandler } from './node-listener.js'
import { checkTarget, resolveServerOptions } from './options.js'

/**
 * The options of {@link startServer}, checked before anything listens: a bad value or an unknown
 * option is a `ConfigError` naming it.
 */
export interface ServerOptions {
  /** An integer from 0 to 65535. Default 8700; 0 picks a free port. */
  port?: number
  /** Default `127.0.0.1` (loopback only). `0.0.0.0` listens on every interface. */
  host?: string
  /** Bytes of request headers allowed (default 16384); more is answered 431. */
  maxHeaderSize?: number
  /** ms allowed to receive a whole request (default 30000; 0: no limit). */
  requestTimeout?: number
  /** Called with every unexpected error. Default: `console.error`. What it throws is printed, never thrown on. */
  onError?: (error: unknown) => void
}

/** The part of Node's `http.Server` that {@link CollectorServer.server} shows, typed without Node's types. */
export interface NodeServerLike {
  /** `server.address()`: the bound address. */
  address(): unknown
  /** `server.close()`: stops accepting connections. Prefer {@link CollectorServer.close}. */
  close(callback?: (error?: Error) => void): unknown
  /** `server.on()`: listens for the server's events. */
  on(event: string, listener: (...args: any[]) => void): unknown
}

/** A running Node HTTP server, as {@link startServer} resolves with it. */
export interface CollectorServer {
  /** `http://host:port`, ready to use as a client's `endpoint`. */
  readonly url: string
  /** The host it listens on. */
  readonly host: string
  /** The port it listens on (the one picked, when `port` was 0). */
  readonly port: number
  /**
   * The underlying Node `http.Server`, typed structurally so the collector's types need no Node
   * types (`server as import('node:http').Server` gives the full type).
   */
  readonly server: NodeServerLike
  /**
   * Stops accepting connections and waits for requests in flight, closing idle keep-alive
   * connections; after `timeoutMs` (default 5000) the remaining connections are cut.
   * Does not close the collector itself. Safe to call twice.
   */
  close(timeoutMs?: number): Promise<void>
}

const NODE_HTTP = 'node:http'

const STATUS_TEXT: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400
  const code = status === 431 ? 'HEADERS_TOO_LARGE' : status === 408 ? 'REQUEST_TIMEOUT' : 'BAD_REQUEST'
  const message = status === 431 ? 'Request headers are too large.' : status === 408 ? 'Request took too long to arrive.' : 'Malformed HTTP request.'
  const body = JSON.stringify({ success: false, error: { code, message } })
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      // Like every answer, readable by a page on any origin (the README's CORS promise).
      `Content-Length: ${Buffer.byteLength(body)}\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n${body}`,
  )
}

/** How long `startServer` waits for the collector to be ready before it listens anyway. */
export const READY_TIMEOUT_MS = 10_000

/**
 * Waits until `handler` serves without making requests wait (the collector: queue server connected,
 * saved settings applied), at most `READY_TIMEOUT_MS`; past that, reports it and returns (the
 * server then listens, and requests wait for the collector as they would have).
 */
async function untilReady(handler: object, onError: (error: unknown) => void): Promise<void> {
  const ready = readinessOf(handler)
  if (ready !== undefined && !(await settlesWithin(ready, READY_TIMEOUT_MS))) {
    onError(new Error(`The collector was not ready after ${READY_TIMEOUT_MS / 1_000} s (is its queue server reachable?); listening anyway: a request waits for it 5 s at most, then is answered 503.`))
  }
}

/**
 * Runs a collector (or any fetch-style handler) as a Node HTTP server. Resolves once it listens,
 * which is when the collector is ready (queue server connected, saved settings applied), or after
 * 10 s, reported through `onError`, if it is not. `node:http` is loaded only when this is called.
 *
 * @throws `ConfigError` (as a rejection) naming a bad or unknown option, or a `target` that is
 *   neither a collector nor a fetch handler.
 *
 * @example
 * ```ts
 * const server = await startServer(createCollector(config), { port: 8700 })
 * console.log(`collector at ${server.url}`) // a client's `endpoint`
 * ```
 */
export async function startServer(
  target: FetchHandler | { fetch: FetchHandler },
  input: ServerOptions = {},
): Promise<CollectorServer> {
  checkTarget(target, 'startServer')
  const options = resolveServerOptions(input)
  const http = (await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_HTTP)) as typeof import('node:http')
  const { host } = options
  // Event streams (the console's live view) never go idle: closing the server ends them.
  const streams = new Set<() => void>()
  const server = http.createServer(
    {
      maxHeaderSize: options.maxHeaderSize,
      requestTimeout: options.requestTimeout,
      headersTimeout: Math.min(options.requestTimeout, 10_000),
      keepAliveTimeout: 5_000,
    },
    createRequestListener(target, { ...(options.onError && { onError: options.onError }), streams }),
  )
  server.on('clientError', answerClientError)
  const report = guardReport(options.onError ?? ((error: unknown) => console.error('isomorphic-analytics server:', error)), 'server')
  await untilReady(typeof target === 'function' ? target : target.fetch, report)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : options.port
  const shownHost = host.includes(':') ? `[${host}]` : host
  const url = `http://${shownHost}:${port}`
  const warning = servesAdmin(typeof target === 'function' ? target : target.fetch) ? plainHttpWarning(host, url) : undefined
  if (warning !== undefined) console.warn(warning)
  let closing: Promise<void> | undefined

  const close = (timeoutMs = 5_000) =>
    (closing ??= new Promise<void>((resolve) => {
      const sweep = setInterval(() => server.closeIdleConnections(), 50)
      const force = setTimeout(() => server.closeAllConnections(), timeoutMs)
      server.close(() => {
        clearInterval(sweep)
        clearTimeout(force)
        resolve()
      })
      for (const end of [...streams]) end()
      server.closeIdleConnections()
    }))

  return { url, host, port, server, close }
}

import { nodeFetch as nodeHttpFetch } from '../../platform/node-http.js'

/**
 * A fetch for webhook deliveries over `node:http(s)` with keep-alive (several times cheaper than
 * Node's fetch); pass it as `createCollector({ fetch })`. It lives with the client's Node
 * transport (one keep-alive pool, one request path); typed with web types only, so the
 * collector's types need no Node types.
 */
export const nodeFetch: (input: string | URL, init?: RequestInit) => Promise<Response> = nodeHttpFetch
