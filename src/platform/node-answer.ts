/**
 * The answer `nodeRequest` (./node-http.ts) resolves with: the status and raw headers of Node's
 * `IncomingMessage`, headers read on demand, and the kept part of the body, which node-http.ts
 * reads in the background. The subset of `Response` delivery reads (`HttpAnswer`, ../transport/types.ts),
 * without building one. Only node-http.ts imports it, so it travels in that module's build
 * (`dist/node-http.js`).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { HttpAnswer } from '../transport/types.js'

/**
 * The answer's headers, read on demand (`get` is all that delivery needs, and only on a failure:
 * Retry-After, the content type): Node builds `res.headers` from the raw list on first read only.
 */
class AnswerHeaders {
  constructor(private readonly res: IncomingMessage) {}
  get(name: string): string | null {
    const value: IncomingHttpHeaders[string] = this.res.headers[name.toLowerCase()]
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
  }
}

/** An answer's body as read: the bytes kept, and why reading stopped early, if it did. */
export interface ReadBody {
  bytes: Buffer
  error?: Error
}

export class NodeAnswer implements HttpAnswer {
  readonly status: number
  readonly statusText: string
  readonly rawHeaders: string[]
  readonly headers: AnswerHeaders
  /** Set when the answer came before the request body was written: settles once it is (or the request is over). */
  readonly written: Promise<void> | undefined
  /** `read` settles once the kept part of the body is in; never rejects (nobody may read it). */
  constructor(res: IncomingMessage, private readonly read: Promise<ReadBody>, written?: Promise<void>) {
    this.status = res.statusCode ?? 0
    this.statusText = res.statusMessage ?? ''
    this.rawHeaders = res.rawHeaders
    this.headers = new AnswerHeaders(res)
    this.written = written
  }
  /** The body's kept bytes (`maxBodyBytes`); rejects when the time limit, a stop or the socket cut it short. */
  async bytes(): Promise<Buffer> {
    const { bytes, error } = await this.read
    if (error) throw error
    return bytes
  }
  async text(): Promise<string> {
    return (await this.bytes()).toString('utf8')
  }
  async arrayBuffer(): Promise<ArrayBuffer> {
    const { buffer, byteOffset, byteLength } = await this.bytes()
    return buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer
  }
}
