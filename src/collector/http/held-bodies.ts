/**
 * Bodies already in memory, handed past the web `Request`/`Response` streams (the Node listener's
 * fast path: a web stream per request and per answer cost more CPU than the rest of a small
 * request's HTTP handling).
 *
 * - A request body a server adapter read whole with its own means (`holdRequestBody`): the
 *   `Request` then carries no body stream, and the collector's one body reader
 *   (`readBodyText`) takes the bytes from here, with the same limits and decoding.
 * - The text of each JSON answer the collector makes (`jsonResponse`): an adapter writes it as is
 *   (`heldResponseText`) instead of reading the `Response` back. The `Response` keeps its body
 *   for any other caller of the fetch handler.
 */
const requestBodies = new WeakMap<Request, Uint8Array>()
const responseTexts = new WeakMap<Response, string>()

/** `request` (made without a body) has `bytes` as its body. */
export function holdRequestBody(request: Request, bytes: Uint8Array): Request {
  requestBodies.set(request, bytes)
  return request
}

export function heldRequestBody(request: Request): Uint8Array | undefined {
  return requestBodies.get(request)
}

/** `response`'s body is `text`. */
export function holdResponseText(response: Response, text: string): Response {
  responseTexts.set(response, text)
  return response
}

export function heldResponseText(response: Response): string | undefined {
  return responseTexts.get(response)
}

const heldBodyReaders = new WeakSet<object>()

/** `handler` reads request bodies only through `readBodyText`: it may be given held bodies. */
export function readsHeldBodies<T extends object>(handler: T): T {
  heldBodyReaders.add(handler)
  return handler
}

/** Whether `handler` was marked by `readsHeldBodies` (any other handler gets body streams). */
export function takesHeldBodies(handler: object): boolean {
  return heldBodyReaders.has(handler)
}
