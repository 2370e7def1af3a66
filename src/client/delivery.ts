/**
 * Sends one batch until it is delivered or fails for good: bounded concurrency, byte-identical
 * retries (the body and its `sentAt` are built once), Retry-After, and 413 bisection that
 * isolates the message(s) the server refuses while the rest is still delivered.
 */
import { AbortedError, AnalyticsError, HttpError, isAnalyticsError } from '../errors.js'
import { count, type Logger } from '../logger.js'
import type { HttpAnswer } from '../platform/transport.js'
import { attemptRequest, discardBody } from '../transport/attempt.js'
import { httpFailure } from '../transport/failure.js'
import { parseRetryAfter } from '../transport/retry-after.js'
import { classifyStatus, isRetryableError } from '../transport/retry-policy.js'
import { attemptsOf, retry } from '../transport/retry.js'
import { Stop, type StopSignal } from '../transport/stop.js'
import type { BodyBuilder } from './batcher.js'
import { sentMessages, type QueuedMessage } from './build-message.js'
import { Limiter } from './limiter.js'
import { MAX_RETRY_AFTER_MS, type ResolvedOptions } from './options.js'

export interface BatchOutcome {
  delivered: number
  failed: number
}

/** Batches are passed as queued (JSON strings); the hooks turn them into messages if asked. */
export interface DeliveryHooks {
  delivered(batch: readonly QueuedMessage[], status: number): void
  retrying(batch: readonly QueuedMessage[], attempt: number, error: AnalyticsError): void
  failed(error: AnalyticsError): void
}

/** A batch's request body and headers, built once (at its first attempt) and sent by every attempt. */
interface Prepared {
  body: string | Uint8Array<ArrayBuffer>
  headers: Record<string, string>
}

const basicAuth = (writeKey: string) => {
  const bytes = new TextEncoder().encode(`${writeKey}:`)
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return `Basic ${btoa(binary)}`
}

async function gzip(body: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (typeof CompressionStream !== 'function') return undefined
  // Response, not Blob#stream: jsdom's Blob has no stream(), though it has CompressionStream.
  const stream = new Response(body).body!.pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

export class Delivery {
  readonly #options: ResolvedOptions
  readonly #bodies: BodyBuilder
  readonly #hooks: DeliveryHooks
  readonly #log: Logger
  readonly #limiter: Limiter
  readonly #headers: Record<string, string>
  /**
   * Aborts every delivery at once (`stop()`): one signal for all, see ../transport/stop.ts. In the
   * browser build an `AbortController`'s (browsers neither warn about many listeners nor pay much
   * for a controller), which spares that build the `Stop` class.
   */
  readonly #stop: { readonly signal: StopSignal; abort(): void } = typeof __BROWSER__ === 'boolean' && __BROWSER__ ? new AbortController() : new Stop()
  /**
   * Attempts that failed in a row, across all batches; any success resets it. A batch's backoff
   * exponent is its retry number capped by this run: in an outage every attempt fails, the run is
   * long, and backoff grows as usual; when the server is healthy and only some requests fail, the
   * run stays short and a batch that was merely unlucky retries quickly instead of waiting out
   * delays meant for an outage.
   */
  #failureRun = 0

  constructor(options: ResolvedOptions, bodies: BodyBuilder, hooks: DeliveryHooks, log: Logger) {
    this.#options = options
    this.#bodies = bodies
    this.#hooks = hooks
    this.#log = log
    this.#limiter = new Limiter(options.maxConcurrentRequests, this.#stop.signal)
    this.#headers = options.plainText
      ? { 'Content-Type': 'text/plain' }
      : { 'Content-Type': 'application/json', Authorization: basicAuth(options.writeKey) }
  }

  /**
   * Delivers `batch`; never rejects. Failures are reported through the `failed` hook. A batch
   * waiting for a free connection slot is this one call, suspended in the limiter; its first
   * attempt takes the slot granted here.
   */
  async send(batch: QueuedMessage[], keepalive = false): Promise<BatchOutcome> {
    let status: number
    try {
      // Released by the first attempt; left held only if the client is stopped before it starts
      // (then the limiter grants no slot anyway).
      await this.#limiter.acquire()
      status = await this.#attempts(batch, keepalive)
    } catch (error) {
      if (error instanceof HttpError && error.status === 413 && batch.length > 1) {
        const half = Math.ceil(batch.length / 2)
        this.#log(`413 for ${count(batch.length, 'message')}; splitting`)
        const [left, right] = await Promise.all([
          this.send(batch.slice(0, half), keepalive),
          this.send(batch.slice(half), keepalive),
        ])
        return { delivered: left.delivered + right.delivered, failed: left.failed + right.failed }
      }
      // Stopped by close(): in flight (`cause` is its aborted attempt) or not yet sent.
      return this.#fail(batch, this.#stop.signal.aborted ? new AbortedError('Delivery stopped: close() ran out of time before the batch was delivered.', { cause: error }) : error)
    }
    this.#hooks.delivered(batch, status)
    return { delivered: batch.length, failed: 0 }
  }

  /**
   * One attempt holds a connection slot (the first, the one `send` took); a batch waiting to
   * retry does not. The body is built once the first attempt holds its slot, so batches waiting
   * for a slot hold only their queued strings, never a second copy of them.
   */
  async #attempt(batch: QueuedMessage[], prepared: { value?: Prepared }, keepalive: boolean, retry: boolean): Promise<HttpAnswer> {
    const signal = this.#stop.signal
    if (retry) await this.#limiter.acquire()
    try {
      const { body, headers } = (prepared.value ??= await this.#prepare(batch, keepalive))
      return await attemptRequest(this.#options.transport, {
        url: this.#options.batchUrl, headers, body, timeoutMs: this.#options.timeout, signal, keepalive,
      })
    } finally {
      this.#limiter.release()
    }
  }

  /** A keepalive body (the page is going away) is not compressed: the page may be gone first. */
  async #prepare(batch: QueuedMessage[], keepalive: boolean): Promise<Prepared> {
    const json = this.#bodies.build(batch, new Date().toISOString())
    const compressed = this.#options.gzip && !keepalive ? await gzip(json) : undefined
    if (this.#log.enabled) this.#log(`sending ${count(batch.length, 'message')} to ${this.#options.batchUrl} (${count(this.#bodies.size(batch), 'byte')}${compressed ? `, ${compressed.byteLength} gzipped` : ''})`)
    if (!compressed) return { body: json, headers: this.#headers }
    return { body: compressed, headers: { ...this.#headers, 'Content-Encoding': 'gzip' } }
  }

  async #attempts(batch: QueuedMessage[], keepalive: boolean): Promise<number> {
    const options = this.#options
    const prepared: { value?: Prepared } = {}
    return retry(
      async (n) => {
        try {
          const response = await this.#attempt(batch, prepared, keepalive, n > 1)
          if (classifyStatus(response.status) === 'success') {
            void discardBody(response, options.timeout)
            this.#failureRun = 0
            return response.status
          }
          const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'), MAX_RETRY_AFTER_MS)
          throw await httpFailure(options.batchUrl, response, retryAfterMs)
        } catch (error) {
          if (isRetryableError(error)) this.#failureRun++
          throw error
        }
      },
      {
        retries: options.maxRetries,
        backoff: { baseMs: options.minRetryDelay, capMs: options.maxRetryDelay },
        exponent: (retry) => Math.max(1, Math.min(retry, this.#failureRun)),
        signal: this.#stop.signal,
        onRetry: ({ attempt, error, delayMs }) => {
          this.#log(`attempt ${attempt} failed (${(error as Error).message}); retrying in ${delayMs} ms`)
          this.#hooks.retrying(batch, attempt, error as AnalyticsError)
        },
      },
    )
  }

  /** Aborts every delivery under way, and any started later: each fails with `AbortedError`. */
  stop(): void {
    this.#stop.abort()
  }

  #fail(batch: QueuedMessage[], error: unknown): BatchOutcome {
    const attempts = attemptsOf(error)
    if (attempts !== undefined) this.#log(`${count(batch.length, 'message')} failed after ${count(attempts, 'attempt')}`)
    const reported = isAnalyticsError(error)
      ? error
      : new AnalyticsError('NETWORK', `Delivery failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    reported.messages = sentMessages(batch)
    this.#hooks.failed(reported)
    return { delivered: 0, failed: batch.length }
  }
}
