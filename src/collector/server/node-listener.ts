/**
 * A Node `(req, res)` request listener around a fetch-style handler: `IncomingMessage` becomes a
 * `Request` with a streaming body (`duplex: 'half'`, read with back-pressure), and the `Response`
 * is written back to the `ServerResponse` (buffered: the collector's answers are tiny; an event
 * stream is written as it comes). It uses
 * only the objects Node hands it (no `node:` import), so it also plugs into an existing
 * `http.createServer`, Express or Fastify app.
 *
 * The collector's own handler gets a direct path (`../http/direct.ts`): a body whose declared
 * length is within the batch limit is read whole with Node's streams and handed over beside a
 * plain request head (URL, method, Node's parsed headers), and its JSON answers are written from
 * their text. A web `Request` and `Response` per request cost more CPU than the rest of a small
 * batch's HTTP handling; one is made only for a route that reads it (the console, admin).
 * An unexpected error is reported and answered 500; it never escapes to crash the process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { messageOf } from '../../errors.js'
import { INGEST_MAX_BODY_BYTES } from '../../limits.js'
import { coreOf, holdRequestBody, type CollectorCore, type RequestHead } from '../http/direct.js'
import { markPeer } from '../http/client-address.js'
import { JsonAnswer } from '../http/errors.js'
import { guardReport } from '../guard-report.js'
import { checkTarget } from './options.js'

/** A fetch-style handler: a `Request` in, a `Response` out (`collector.fetch` is one). */
export type FetchHandler = (request: Request) => Promise<Response>

/** The options of {@link createRequestListener}. */
export interface RequestListenerOptions {
  /** Called with every unexpected error. Default: `console.error`. What it throws is printed, never thrown on. */
  onError?: (error: unknown) => void
  /** @internal The event streams open now, each with what ends it (`startServer` ends them on close). */
  streams?: Set<() => void>
}

/** Methods the WHATWG `Request` refuses to represent. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])
/** How long a refused request's remaining body is discarded before its connection is cut. */
const DISCARD_GRACE_MS = 2_000

function handlerOf(target: FetchHandler | { fetch: FetchHandler }): FetchHandler {
  return typeof target === 'function' ? target : (request) => target.fetch(request)
}

/**
 * The request body as a web stream. Node pauses when the stream's queue is full (back-pressure).
 * When the handler cancels it (a refused body) the rest is discarded, not buffered, so the client
 * can finish sending and read the answer.
 */
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        req.on('data', (chunk: Buffer) => {
          if (!open) return
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
          if ((controller.desiredSize ?? 0) <= 0) req.pause()
        })
        req.on('end', () => {
          if (open) controller.close()
          open = false
        })
        req.on('error', (error) => {
          if (open) controller.error(error)
          open = false
        })
      },
      pull() {
        req.resume()
      },
      cancel() {
        open = false
        req.resume()
      },
    },
    { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
  )
}

/** Bodies up to this many bytes (declared by `Content-Length`) are read whole before the handler runs. */
const HELD_BODY_LIMIT = INGEST_MAX_BODY_BYTES

/** The length a request declares, when it is small enough to read whole (else `undefined`: streamed). */
function holdableLength(req: IncomingMessage): number | undefined {
  const method = req.method ?? 'GET'
  if (method === 'GET' || method === 'HEAD' || req.headers['transfer-encoding'] !== undefined) return undefined
  const declared = Number(req.headers['content-length'])
  return Number.isInteger(declared) && declared >= 0 && declared <= HELD_BODY_LIMIT ? declared : undefined
}

/** The whole body (Node checks it against `Content-Length`); `undefined` when the client went away first. */
function readWhole(req: IncomingMessage, length: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length)))
    req.once('close', () => !req.complete && resolve(undefined))
  })
}

/** The URL the client used (so logs show it): with the Host header when it is a plain host[:port]. */
function urlOf(req: IncomingMessage): string {
  const target = req.url ?? '/'
  const host = req.headers.host
  const origin = `http${(req.socket as { encrypted?: boolean }).encrypted ? 's' : ''}://${host && /^[\w.:[\]-]+$/.test(host) ? host : 'localhost'}`
  return target.startsWith('/') ? `${origin}${target}` : new URL(target).href
}

/** A request whose body was read whole, as the collector's core reads it (no web objects). */
function headOf(req: IncomingMessage, body: Uint8Array): RequestHead {
  const { headers } = req
  return holdRequestBody({
    url: urlOf(req),
    method: req.method ?? 'GET',
    headers: {
      get(name) {
        const value = headers[name.toLowerCase()]
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
      },
    },
    body: null,
  }, body)
}

/** `req` as a web `Request`, marked with the socket's peer (limits kept per client address). */
export function toRequest(req: IncomingMessage, heldBody?: Uint8Array): Request {
  const request = webRequest(req, heldBody)
  const peer = req.socket.remoteAddress
  return peer === undefined ? request : markPeer(request, peer)
}

function webRequest(req: IncomingMessage, heldBody?: Uint8Array): Request {
  const url = urlOf(req)
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
  const method = req.method ?? 'GET'
  if (heldBody !== undefined) return holdRequestBody(new Request(url, { method, headers }), heldBody)
  const hasBody = method !== 'GET' && method !== 'HEAD'
  return new Request(url, {
    method,
    headers,
    ...(hasBody && { body: bodyStream(req), duplex: 'half' }),
  } as RequestInit)
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done)
      res.off('close', done)
      resolve()
    }
    res.on('drain', done)
    res.on('close', done)
  })
}

/**
 * Streams a `text/event-stream` answer (the console's live view) chunk by chunk until it ends,
 * the client goes away or `streams`' owner (the server, closing) ends it.
 */
async function streamResponse(body: ReadableStream<Uint8Array>, status: number, headers: Record<string, string>, res: ServerResponse, streams?: Set<() => void>): Promise<void> {
  const reader = body.getReader()
  const end = () => void reader.cancel().catch(() => {})
  streams?.add(end)
  res.once('close', end)
  res.writeHead(status, headers)
  res.flushHeaders()
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      // A client that does not keep up: read on once it drained, so its events wait upstream (gathered).
      if (!res.write(chunk.value)) await drained(res)
    }
  } finally {
    streams?.delete(end)
    res.end()
  }
}

/** Writes the answer. It is buffered (the collector's answers are a few bytes of JSON), but for an event stream. */
async function writeResponse(response: Response | JsonAnswer, req: IncomingMessage, res: ServerResponse, streams?: Set<() => void>): Promise<void> {
  if (response instanceof JsonAnswer) return writeBuffered(response.status, { ...response.headers }, response.text, req, res)
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => (headers[name] = value))
  if (response.body !== null && /^text\/event-stream/i.test(headers['content-type'] ?? '')) {
    return streamResponse(response.body, response.status, headers, res, streams)
  }
  // Text goes out as a string: Node then writes it in one go with the headers (not encoded text,
  // such as the console's gzipped assets: those are bytes).
  const textual = /^(?:application\/json|text\/)/i.test(headers['content-type'] ?? '') && headers['content-encoding'] === undefined
  const body = response.body === null ? undefined : textual ? await response.text() : Buffer.from(await response.arrayBuffer())
  writeBuffered(response.status, headers, body, req, res)
}

function writeBuffered(status: number, headers: Record<string, string>, body: string | Buffer | undefined, req: IncomingMessage, res: ServerResponse): void {
  // Answered before the body was read (refused): this connection carries no further request.
  if (!req.complete) headers.connection = 'close'
  if (body !== undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength)
  res.writeHead(status, headers)
  res.end(body)
}

function plainError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = JSON.stringify({ success: false, error: { code, message } })
  // Like every answer, readable by a page on any origin (the README's CORS promise).
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'access-control-allow-origin': '*' })
  res.end(body)
}

/**
 * How `req` is answered: by the collector's core with a plain head when its body can be read whole
 * first (a web `Request` only if its route asks, `full`), else by `handle` with a `Request`
 * streaming the body. Resolves once the body is read (with nothing to answer, `undefined`: the
 * client went away) and throws what makes the request malformed.
 */
async function prepare(req: IncomingMessage, handle: FetchHandler, core: CollectorCore | undefined): Promise<(() => Promise<Response | JsonAnswer>) | undefined> {
  const length = core === undefined ? undefined : holdableLength(req)
  if (length === undefined) {
    const request = toRequest(req)
    return () => handle(request)
  }
  const body = await readWhole(req, length)
  if (body === undefined) return undefined
  const head = headOf(req, body)
  let request: Request | undefined
  return () => core!(head, () => (request ??= toRequest(req, body)))
}

/** After the answer, a body that is still arriving is discarded for a while, then cut off. */
function cutOffUnfinishedBody(req: IncomingMessage, res: ServerResponse): void {
  res.once('finish', () => {
    if (req.complete) return
    req.resume()
    const timer = setTimeout(() => {
      if (!req.complete) req.socket.destroy()
    }, DISCARD_GRACE_MS)
    timer.unref()
    req.once('end', () => clearTimeout(timer))
  })
}

/**
 * Node's `IncomingMessage` and `ServerResponse` as the listener's public signature names them:
 * structural, so the collector's types check without Node's types (a worker project has none).
 */
export interface NodeRequestLike { readonly method?: string | undefined; readonly url?: string | undefined }
/** Node's `ServerResponse`, structurally (see {@link NodeRequestLike}). */
export interface NodeResponseLike { readonly headersSent: boolean }

/**
 * A Node `(req, res)` request listener around a collector (or any fetch-style handler), for
 * `http.createServer`, Express or Fastify. It uses only what Node hands it (no `node:` import). An
 * unexpected error is reported to `onError` and answered 500; it never crashes the process.
 *
 * @throws `ConfigError` for a `target` that is neither a collector nor a fetch handler.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http'
 *
 * createServer(createRequestListener(collector)).listen(8700, '127.0.0.1')
 * ```
 */
export function createRequestListener(
  target: FetchHandler | { fetch: FetchHandler },
  options: RequestListenerOptions = {},
): (req: NodeRequestLike, res: NodeResponseLike) => void {
  checkTarget(target, 'createRequestListener')
  const handle = handlerOf(target)
  const core = coreOf(typeof target === 'function' ? target : target.fetch)
  const onError = guardReport(options.onError ?? ((error: unknown) => console.error('isomorphic-analytics server: unexpected error', error)), 'server')
  return (nodeReq, nodeRes) => {
    const [req, res] = [nodeReq as IncomingMessage, nodeRes as ServerResponse]
    req.on('error', () => {}) // A client that goes away mid-body: its stream errors; nothing to do.
    res.on('error', () => {})
    cutOffUnfinishedBody(req, res)
    void (async () => {
      let answer: () => Promise<Response | JsonAnswer>
      try {
        if (FORBIDDEN_METHODS.has((req.method ?? '').toUpperCase())) {
          return plainError(res, 405, 'METHOD_NOT_ALLOWED', `${req.method} is not supported.`)
        }
        const prepared = await prepare(req, handle, core)
        if (prepared === undefined) return
        answer = prepared
      } catch (error) {
        const reason = messageOf(error)
        return plainError(res, 400, 'BAD_REQUEST', `Malformed request: ${reason}`)
      }
      try {
        await writeResponse(await answer(), req, res, options.streams)
      } catch (error) {
        onError(error)
        if (!res.headersSent) plainError(res, 500, 'INTERNAL', 'Internal server error.')
        else res.destroy()
      }
    })()
  }
}
