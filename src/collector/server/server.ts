/**
 * The Node side of the collector: `startServer(collector, options)` runs it as a Node HTTP server,
 * and `nodeFetch` delivers its webhooks over `node:http(s)`. The `node:` modules are loaded when
 * these are called (never by importing the package), so `isomorphic-analytics/collector` stays
 * importable on Bun, Deno and workers, where only `createCollector(...).fetch` is used.
 *
 * Limits: request headers at most `maxHeaderSize` bytes (431 beyond), a request must arrive
 * within `requestTimeout`. Malformed HTTP is answered 400 by the parser hook, never thrown.
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http'
import type { Socket } from 'node:net'
import { createRequestListener, type FetchHandler } from './node-listener.js'

export interface ServerOptions {
  /** Default 8700; 0 picks a free port. */
  port?: number
  /** Default `127.0.0.1` (loopback only). `0.0.0.0` listens on every interface. */
  host?: string
  /** Bytes of request headers allowed (default 16384); more is answered 431. */
  maxHeaderSize?: number
  /** ms allowed to receive a whole request (default 30000). */
  requestTimeout?: number
  /** Called with every unexpected error. Default: `console.error`. */
  onError?: (error: unknown) => void
}

export interface NodeServerLike {
  address(): unknown
  close(callback?: (error?: Error) => void): unknown
  on(event: string, listener: (...args: any[]) => void): unknown
}

export interface CollectorServer {
  /** `http://host:port`, ready to use as a client's `endpoint`. */
  readonly url: string
  readonly host: string
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
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

export async function startServer(
  target: FetchHandler | { fetch: FetchHandler },
  options: ServerOptions = {},
): Promise<CollectorServer> {
  const http = (await import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_HTTP)) as typeof import('node:http')
  const host = options.host ?? '127.0.0.1'
  // Event streams (the console's live view) never go idle: closing the server ends them.
  const streams = new Set<() => void>()
  const server = http.createServer(
    {
      maxHeaderSize: options.maxHeaderSize ?? 16_384,
      requestTimeout: options.requestTimeout ?? 30_000,
      headersTimeout: Math.min(options.requestTimeout ?? 30_000, 10_000),
      keepAliveTimeout: 5_000,
    },
    createRequestListener(target, { ...(options.onError && { onError: options.onError }), streams }),
  )
  server.on('clientError', answerClientError)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 8700, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 8700)
  const shownHost = host.includes(':') ? `[${host}]` : host
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

  return { url: `http://${shownHost}:${port}`, host, port, server, close }
}

// ───────────────────────── nodeFetch ─────────────────────────

/**
 * `nodeFetch`: a fetch for webhook deliveries on Node, built on `node:http`/`node:https` with a
 * keep-alive connection pool. It does what `WebhookDestination` asks of fetch (POST a string
 * body, honour an `AbortSignal`, never follow redirects, return the status and headers) at a
 * fraction of the CPU cost of the global (undici) fetch, which is what bounds end-to-end
 * throughput on a small machine. The CLI uses it; pass it as `createCollector({ fetch })`.
 * `node:http`/`node:https` are loaded on first use, like `node:http` for `startServer`.
 *
 * A refused TLS certificate surfaces as the socket's error (`code`, e.g.
 * `DEPTH_ZERO_SELF_SIGNED_CERT`), which the destination reports as a `TlsError` and never retries.
 */
interface NodeHttp {
  request(url: URL, options: RequestOptions, callback: (res: IncomingMessage) => void): ClientRequest
  Agent: new (options: { keepAlive: boolean; maxSockets: number }) => HttpAgent
}

const MAX_SOCKETS = 64
const modules: { http?: Promise<NodeHttp>; https?: Promise<NodeHttp> } = {}
const agents = new Map<string, HttpAgent>()

function load(protocol: 'http' | 'https'): Promise<NodeHttp> {
  const specifier = `node:${protocol}`
  return (modules[protocol] ??= import(/* webpackIgnore: true */ /* @vite-ignore */ specifier) as Promise<NodeHttp>)
}

function headerRecord(init: RequestInit | undefined, bodyLength: number): Record<string, string> {
  const out: Record<string, string> = {}
  new Headers(init?.headers).forEach((value, name) => (out[name] = value))
  out['content-length'] = String(bodyLength)
  return out
}

function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers()
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    try {
      headers.append(res.rawHeaders[i], res.rawHeaders[i + 1])
    } catch {
      // A header value fetch would refuse: left out, as the status is what matters.
    }
  }
  return headers
}

export async function nodeFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(input)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`nodeFetch: unsupported protocol ${url.protocol}`)
  const protocol = url.protocol === 'https:' ? 'https' : 'http'
  const mod = await load(protocol)
  let agent = agents.get(protocol)
  if (!agent) agents.set(protocol, (agent = new mod.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS })))
  // A string body goes out in one write with the headers (a Buffer would take a writev).
  const body = init?.body == null ? undefined : typeof init.body === 'string' ? init.body : Buffer.from(init.body as Uint8Array)
  const bodyLength = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
  const signal = init?.signal ?? undefined
  signal?.throwIfAborted()
  return new Promise<Response>((resolve, reject) => {
    const req = mod.request(url, { method: init?.method ?? 'GET', agent, headers: headerRecord(init, bodyLength) }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        signal?.removeEventListener('abort', onAbort)
        const status = res.statusCode ?? 0
        const payload = status === 204 || status === 205 || status === 304 ? null : Buffer.concat(chunks)
        try {
          resolve(new Response(payload, { status, statusText: res.statusMessage ?? '', headers: responseHeaders(res) }))
        } catch (error) {
          reject(error) // e.g. a 1xx final status, which a Response cannot represent.
        }
      })
    })
    const onAbort = () => {
      const reason = signal!.reason instanceof Error ? signal!.reason : new Error('aborted')
      req.destroy(reason)
      reject(reason) // Settles even if the abort lands while the answer is being read.
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (error) => {
      signal?.removeEventListener('abort', onAbort)
      reject(error)
    })
    req.end(body)
  })
}
