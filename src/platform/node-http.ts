/**
 * HTTP over `node:http`/`node:https` with one keep-alive connection pool per protocol: several
 * times cheaper in CPU than Node's global fetch (undici), which is what bounds throughput on a
 * small machine (README, Performance). Two faces of one request function:
 * - `nodeRequest`: what the client's delivery needs (status, headers, a refusal's reason) without
 *   building a WHATWG `Response`, which costs a third again of the request;
 * - `nodeFetch`: a fetch for the collector's webhook deliveries (and anyone who wants one).
 * Failures are the socket's own errors (`code` such as `ECONNREFUSED`, or a TLS code such as
 * `DEPTH_ZERO_SELF_SIGNED_CERT`): callers turn them into typed errors in one place,
 * `attemptRequest` (src/transport/attempt.ts), exactly as they do for fetch's.
 *
 * The client reaches this module only through a dynamic import in src/platform/transport.ts, on
 * Node only (see `platformTransport`), which only the server platform (./server.ts) imports: the
 * browser and worker builds never reach it. In the collector's build it is
 * `dist/node-http.js` (`.cjs`), beside `dist/collector.js`, so a worker bundle leaves it out
 * (tsup.config.ts); for that reason it imports only ./transport-key.ts and ./node-answer.ts (the
 * answer it resolves with, which nothing else imports), and types. The `node:` modules are loaded on first
 * use, the methods looked up on the module object at call time (so an interceptor such as msw that
 * patches `http.request` applies).
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http'
import type { LookupFunction } from 'node:net'
import type { StopSignal } from '../transport/stop.js'
import { NodeAnswer, type ReadBody } from './node-answer.js'
import { TRANSPORT_OF_FETCH } from './transport-key.js'

export interface NodeRequestInit {
  method?: string
  headers?: Record<string, string>
  body?: string | Uint8Array
  signal?: StopSignal
  /**
   * The whole request's time limit, ms: when it runs out the request is destroyed and the promise
   * rejects with an error whose `timedOut` is true (`attemptRequest` makes it a `TimeoutError`).
   */
  timeoutMs?: number
  /**
   * Bytes of the answer's body kept for `text()` (default `MAX_ANSWER_BYTES`, 16 KiB); the rest is
   * read and discarded. `nodeFetch` keeps all of it.
   */
  maxBodyBytes?: number
  /**
   * Checks each address the host name resolves to, in the connection's DNS lookup (so the address
   * checked is the one connected to): a reason refuses the request before it connects, with an
   * error whose `code` is `EADDRREFUSED`. Such requests get connections of their own.
   */
  checkAddress?: (address: string) => string | undefined
}

interface NodeHttp {
  request(options: RequestOptions, callback: (res: IncomingMessage) => void): ClientRequest
  Agent: new (options: { keepAlive: boolean; maxSockets: number }) => HttpAgent
}

const MAX_SOCKETS = 64

/** A protocol's module and its keep-alive agents (the second for requests whose addresses are checked), once loaded. */
interface Loaded {
  mod: NodeHttp
  agent: HttpAgent
  checkedAgent: HttpAgent
}

const loaded: { http?: Loaded; https?: Loaded } = {}
const loading: { http?: Promise<Loaded>; https?: Promise<Loaded> } = {}

const proc = globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined

const withAgent = (protocol: 'http' | 'https', mod: NodeHttp): Loaded =>
  (loaded[protocol] = { mod, agent: new mod.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }), checkedAgent: new mod.Agent({ keepAlive: true, maxSockets: MAX_SOCKETS }) })

interface NodeDns { lookup(hostname: string, options: object, callback: (error: Error | null, addresses: Array<{ address: string; family: number }>) => void): void }
let dns: NodeDns | Promise<NodeDns> | undefined
const NODE_DNS = 'node:dns'

const addressRefused = (hostname: string, address: string, reason: string) =>
  Object.assign(new Error(`Refused to connect to ${hostname}: it resolves to ${address}, ${reason}.`), { code: 'EADDRREFUSED' })

/**
 * A `lookup` for `http.request` that resolves as `dns.lookup` does, then refuses the connection
 * when an address `check` names a reason for. Every address is checked, not only the first: a
 * connection may try them in turn (`autoSelectFamily`).
 */
function checkedLookup(check: (address: string) => string | undefined): LookupFunction {
  return (hostname, options, callback) => {
    // A specifier in a variable: bundlers leave it alone (a browser bundle of the client has no `node:dns`).
    dns ??= (proc?.getBuiltinModule?.(NODE_DNS) as NodeDns | undefined) ?? (import(/* webpackIgnore: true */ /* @vite-ignore */ NODE_DNS).then((m: { default: NodeDns }) => m.default))
    const resolve = (d: NodeDns) => d.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '')
      for (const { address } of addresses) {
        const reason = check(address)
        if (reason !== undefined) return callback(addressRefused(hostname, address, reason), '')
      }
      if (options.all) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
    if (dns instanceof Promise) dns.then((d) => resolve((dns = d)), (error: Error) => callback(error, ''))
    else resolve(dns)
  }
}

/**
 * `node:http(s)` and its agent, looked up once: at once where `process.getBuiltinModule` exists
 * (Node ≥ 20.16), else imported. Its `request` is still read from the module at each call.
 */
function load(protocol: 'http' | 'https'): Loaded | Promise<Loaded> {
  const done = loaded[protocol]
  if (done) return done
  const specifier = `node:${protocol}`
  const builtin = proc?.getBuiltinModule?.(specifier) as NodeHttp | undefined
  if (builtin) return withAgent(protocol, builtin)
  return (loading[protocol] ??= (import(/* webpackIgnore: true */ /* @vite-ignore */ specifier) as Promise<{ default: NodeHttp }>).then((m) => loaded[protocol] ?? withAgent(protocol, m.default)))
}

/**
 * Where a URL points, as `http.request` options and the headers Node would derive from them
 * (`Host`, and `Authorization` from credentials), since headers passed as a list are sent as
 * they are: parsed once per URL (a client sends to one).
 */
interface Target {
  protocol: 'http:' | 'https:'
  hostname: string
  port?: number
  path: string
  host: string
  authorization?: string
}

const MAX_TARGETS = 256
const targets = new Map<string, Target>()

function targetOf(input: string | URL): Target {
  const key = typeof input === 'string' ? input : input.href
  let target = targets.get(key)
  if (target) return target
  const url = typeof input === 'string' ? new URL(input) : input
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`nodeRequest: unsupported protocol ${url.protocol}`)
  // What `http.request(url)` would take from it (Node's `urlToHttpOptions`): an IPv6 host unbracketed.
  const host = url.hostname
  target = { protocol: url.protocol, hostname: host.startsWith('[') ? host.slice(1, -1) : host, path: `${url.pathname}${url.search}`, host: url.host }
  if (url.port !== '') target.port = Number(url.port)
  if (url.username || url.password) {
    target.authorization = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
  }
  if (targets.size >= MAX_TARGETS) targets.clear()
  targets.set(key, target)
  return target
}

/**
 * A request's headers as a flat list, which Node sends as is (no per-header map, name lookups or
 * copies), with `Host` and the URL's credentials unless given, and `contentLength` last (one
 * given is left out).
 */
function headerList(headers: Record<string, string> | undefined, target: Target, contentLength: number): string[] {
  const list: string[] = []
  let host = true
  let authorization = target.authorization !== undefined
  for (const name in headers) {
    const lower = name.toLowerCase()
    if (lower === 'content-length') continue
    if (lower === 'host') host = false
    else if (lower === 'authorization') authorization = false
    list.push(name, headers[name])
  }
  if (host) list.push('Host', target.host)
  if (authorization) list.push('Authorization', target.authorization!)
  list.push('Content-Length', String(contentLength))
  return list
}

/**
 * Bytes of an answer's body kept by default: enough for a refusal's reason (`readReason` quotes at
 * most 200 characters of it). The rest is read and thrown away, so the connection can be reused.
 */
export const MAX_ANSWER_BYTES = 16_384

/**
 * One request. Never follows redirects. It resolves as soon as the status and headers arrive: the
 * status decides the outcome, so a 2xx whose body is slow or huge is still a success (a receiver
 * that answered 200 got the message; waiting for its body would count it as a timeout and send it
 * again). The body is read in the background, under the same time limit: its first
 * `maxBodyBytes` are kept for `text()` (a refusal's reason), the rest is discarded as it arrives,
 * and a body still arriving when the time limit runs out has its connection ended.
 * It `takesTimeout` (src/platform/transport.ts): the time limit is a timer of its own, and the
 * signal only what stops it early, so no `AbortController` is made per request.
 */
export async function nodeRequest(input: string | URL, init: NodeRequestInit = {}): Promise<NodeAnswer> {
  const target = targetOf(input)
  const found = load(target.protocol === 'https:' ? 'https' : 'http')
  const { mod, agent, checkedAgent } = found instanceof Promise ? await found : found
  const { body, signal, timeoutMs, checkAddress } = init
  // An address written in the URL is connected to without a lookup: checked here.
  const literal = checkAddress?.(target.hostname)
  if (literal !== undefined) throw addressRefused(target.hostname, target.hostname, literal)
  const maxBodyBytes = init.maxBodyBytes ?? MAX_ANSWER_BYTES
  // A string body goes out in one write with the headers (a Buffer would take a writev).
  const payload = body === undefined || typeof body === 'string' || Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const headers = headerList(init.headers, target, payload === undefined ? 0 : typeof payload === 'string' ? Buffer.byteLength(payload) : payload.byteLength)
  if (signal?.aborted) throw signal.reason
  return new Promise<NodeAnswer>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    /** Ends the body's reading early (time limit, stop, socket error), once there is an answer. */
    let cutBody: ((error: Error) => void) | undefined
    let over = false
    const settled = () => {
      over = true
      signal?.removeEventListener('abort', onAbort)
      if (timer !== undefined) clearTimeout(timer)
    }
    // Before the answer: the request fails. After it: only the body's reading is cut short.
    const fail = (error: Error) => {
      if (cutBody) return cutBody(error)
      settled()
      req.destroy(error)
      reject(error)
    }
    const req = mod.request({ protocol: target.protocol, hostname: target.hostname, port: target.port, path: target.path, method: init.method ?? 'GET', headers, agent: checkAddress ? checkedAgent : agent, lookup: checkAddress && checkedLookup(checkAddress) }, (res) => {
      const chunks: Buffer[] = []
      let kept = 0
      let finish!: (read: ReadBody) => void
      let finished = false
      const read = new Promise<ReadBody>((done) => (finish = done))
      const done = (error?: Error) => {
        if (finished) return
        finished = true
        finish({ bytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), ...(error && { error }) })
      }
      cutBody = (error) => {
        settled()
        done(error)
        req.destroy()
      }
      res.on('data', (chunk: Buffer) => {
        if (kept >= maxBodyBytes) return // Past the cap: discarded as it arrives.
        const room = maxBodyBytes - kept
        const part = chunk.length > room ? chunk.subarray(0, room) : chunk
        chunks.push(part)
        kept += part.length
        if (kept >= maxBodyBytes) done()
      })
      res.on('error', (error) => cutBody!(error))
      res.on('end', () => {
        settled()
        done()
      })
      // Closed before its end without an error (Node emits none for some resets): what arrived is kept.
      res.on('close', () => {
        if (!res.complete) cutBody!(Object.assign(new Error('The answer was cut short.'), { code: 'ECONNRESET' }))
      })
      // A body still being written (an answer before the receiver read it all) is said so, on the
      // answer (`written`): a client reuses its memory only once it is written or the request is over.
      const written = req.writableFinished || payload === undefined || typeof payload === 'string'
        ? undefined
        : new Promise<void>((done) => {
          req.once('finish', done)
          req.once('close', done)
        })
      resolve(new NodeAnswer(res, read, written))
    })
    const onAbort = () => fail(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'))
    // The time limit counts from when the request has a socket (connecting included), not while
    // it waits for one of the agent's MAX_SOCKETS: a burst to one host must not time out requests
    // the receiver has not seen yet (and then retry them, sending duplicates).
    if (timeoutMs !== undefined) {
      req.once('socket', () => {
        if (over) return
        timer = setTimeout(() => {
          timer = undefined
          fail(Object.assign(new Error(`Request timed out after ${timeoutMs} ms`), { timedOut: true }))
        }, Math.min(timeoutMs, 2 ** 31 - 1)) // Past 2^31 − 1 ms a timer fires at once.
        timer.unref()
      })
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', fail)
    req.end(payload)
  })
}
Object.defineProperty(nodeRequest, 'takesTimeout', { value: true })

function headerRecord(headers: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  new Headers(headers).forEach((value, name) => (out[name] = value))
  return out
}

function responseHeaders(rawHeaders: string[]): Headers {
  const headers = new Headers()
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    try {
      headers.append(rawHeaders[i], rawHeaders[i + 1])
    } catch {
      // A header value fetch would refuse: left out, as the status is what matters.
    }
  }
  return headers
}

/**
 * A fetch for POSTing string bodies on Node, built on `nodeRequest`: it honours an `AbortSignal`,
 * never follows redirects, and returns a `Response` with the status, headers and body. The
 * collector's CLI uses it for webhook deliveries; pass it as `createCollector({ fetch })`.
 */
export async function nodeFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  const url = new URL(input)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`nodeFetch: unsupported protocol ${url.protocol}`)
  const body = init?.body == null ? undefined : typeof init.body === 'string' ? init.body : (init.body as Uint8Array)
  const answer = await nodeRequest(url, {
    method: init?.method ?? 'GET',
    headers: headerRecord(init?.headers),
    body,
    signal: init?.signal ?? undefined,
    // A fetch's caller asked for the body: all of it (rejecting, as fetch does, if it is cut short).
    maxBodyBytes: Number.POSITIVE_INFINITY,
  })
  const status = answer.status
  const bytes = await answer.bytes()
  const payload = status === 204 || status === 205 || status === 304 ? null : (bytes as Uint8Array<ArrayBuffer>)
  // A 1xx final status, which a Response cannot represent, rejects here.
  return new Response(payload, { status, statusText: answer.statusText, headers: responseHeaders(answer.rawHeaders) })
}

// The webhook attempt, given `nodeFetch`, sends through `nodeRequest` itself (no `Response` built).
Object.defineProperty(nodeFetch, TRANSPORT_OF_FETCH, { value: nodeRequest })
