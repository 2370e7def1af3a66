/**
 * The Node server's direct path to the collector's own handler, without web `Request`/`Response`
 * objects: in Node 20 making a `Request` or a `Response` with a body costs more than the rest of a
 * small batch's HTTP handling (each brings web streams, and a `Request` an abort signal).
 *
 * - `RequestHead`: what the collector reads of a request. A web `Request` is one; the Node
 *   server makes a plain one (URL, method, Node's parsed headers) for a body it read whole.
 * - A body read whole is held beside its head (`holdRequestBody`), and the collector's one body
 *   reader (`readBodyText`) takes the bytes from here, with the same limits and decoding.
 * - `CollectorCore`: the collector's handler before its answers become `Response`s. Its JSON
 *   answers are `JsonAnswer`s (http/errors.ts) that the Node server writes as they are; `fetch`
 *   turns them into `Response`s for every other caller. Routes that need a real `Request` (the
 *   console, the admin endpoints) ask the server for one (`full`).
 */
import type { JsonAnswer } from './errors.js'
import { mark } from './marks.js'

export interface RequestHead {
  readonly url: string
  readonly method: string
  readonly headers: { get(name: string): string | null }
  /** The body as a stream: `null` when there is none or it is held. */
  readonly body: ReadableStream<Uint8Array> | null
}

const bodies = mark<RequestHead, Uint8Array>()

/** `head` (made without a body stream) has `bytes` as its body. */
export const holdRequestBody = bodies.set
export const heldRequestBody = bodies.get

/** Answers `head`; `full()` makes it a web `Request` for the routes that need one. */
export type CollectorCore = (head: RequestHead, full: () => Request) => Promise<Response | JsonAnswer>

const cores = mark<object, CollectorCore>()

/** `fetch` answers through `core`: a server adapter may call `core` directly. */
export const withCore = cores.set
/** The core `withCore` gave `fetch`, or `undefined` (any other handler: web objects only). */
export const coreOf = cores.get
