/**
 * Sends one batch until it is delivered or fails for good: bounded concurrency, byte-identical
 * retries (the body and its `sentAt` are built once), Retry-After, and 413 bisection that
 * isolates the message(s) the server refuses while the rest is still delivered.
 */
import { AbortedError, AnalyticsError, HttpError, isAnalyticsError, messageOf } from '../errors.js'
import { count, type Logger } from '../logger.js'
import { KEEPALIVE_BODY_BYTES } from '../limits.js'
import { createStop, discardBody } from '#platform'
import { sleep } from '../transport/sleep.js'
import type { HttpAnswer } from '../transport/types.js'
import { attemptRequest, attemptsOf, retry } from '../transport/attempt.js'
import { httpFailure } from '../transport/failure.js'
import { parseRetryAfter } from '../transport/retry-after.js'
import { classifyStatus, isRetryableError } from '../transport/retry-policy.js'
import type { StopSignal } from '../transport/stop.js'
import { parsedMessages, type QueueBatch } from '../queue/message-queue.js'
import { MAX_RETRY_AFTER_MS, type ResolvedOptions } from './options.js'

export interface BatchOutcome {
  delivered: number
  failed: number
}

/** Several batches' outcomes added up: a split batch's halves, a flush's batches. */
export function sumOutcomes(outcomes: readonly BatchOutcome[]): BatchOutcome {
  const sum = { delivered: 0, failed: 0 }
  for (const o of outcomes) {
    sum.delivered += o.delivered
    sum.failed += o.failed
  }
  return sum
}

/** Batches are passed as the queue made them; the hooks turn them into messages if asked. */
export interface DeliveryHooks {
  delivered(batch: QueueBatch, status: number): void
  retrying(batch: QueueBatch, attempt: number, error: AnalyticsError): void
  failed(error: AnalyticsError): void
}

/** A batch's request body and headers, built once (at its first attempt) and sent by every attempt. */
interface Prepared {
  body: string | Uint8Array<ArrayBuffer>
  headers: Record<string, string>
}

/** One batch being delivered. */
interface Sending {
  batch: QueueBatch
  prepared?: Prepared
  /** `Delivery#hides` when its last attempt ended or it was handed over (-1: on page hide). */
  hides: number
  /** Whether its next attempt holds a connection slot (see `#take`). */
  slot?: boolean
  /** Settles once the transport has written its body (answers that came first said it was still writing it). */
  written?: Promise<unknown>
}

/**
 * Bytes of keepalive request bodies in flight from this page, by all its clients: the browser
 * refuses a keepalive request past 64 KiB in all.
 */
let keepaliveBytes = 0

/** `btoa` takes Latin-1 only: the key's UTF-8 bytes, one character each (a write key is short). */
const basicAuth = (writeKey: string) => `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(`${writeKey}:`)))}`

async function gzip(body: string | Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer> | undefined> {
  if (typeof CompressionStream !== 'function') return undefined
  // Response, not Blob#stream: jsdom's Blob has no stream(), though it has CompressionStream.
  const stream = new Response(body).body!.pipeThrough(new CompressionStream('gzip'))
  return new Uint8Array(await new Response(stream).arrayBuffer())
}

export class Delivery {
  readonly #options: ResolvedOptions
  readonly #hooks: DeliveryHooks
  readonly #log: Logger
  readonly #limiter: Limiter
  readonly #headers: Record<string, string>
  /**
   * Aborts every delivery at once (`stop()`): one signal for all, the platform's (see
   * ../transport/stop.ts). In the browser build an `AbortController`'s (browsers neither warn about many listeners nor pay much
   * for a controller), which spares that build the `Stop` class.
   */
  readonly #stop: { readonly signal: StopSignal; abort(): void } = createStop()
  /**
   * Attempts that failed in a row, across all batches; any success resets it. A batch's backoff
   * exponent is its retry number capped by this run: in an outage every attempt fails, the run is
   * long, and backoff grows as usual; when the server is healthy and only some requests fail, the
   * run stays short and a batch that was merely unlucky retries quickly instead of waiting out
   * delays meant for an outage.
   */
  #failureRun = 0
  /** Page hides so far: one since a batch's last attempt ended its wait (see `hide`). */
  #hides = 0
  /** What ends each retry wait under way (see `hide`). */
  readonly #sleeping = new Set<() => void>()

  constructor(options: ResolvedOptions, hooks: DeliveryHooks, log: Logger) {
    this.#options = options
    this.#hooks = hooks
    this.#log = log
    this.#limiter = new Limiter(options.maxConcurrentRequests, this.#stop.signal)
    // Frozen: the same object goes with every request, and no one may change it.
    this.#headers = Object.freeze<Record<string, string>>(options.plainText
      ? { 'Content-Type': 'text/plain' }
      : { 'Content-Type': 'application/json', Authorization: basicAuth(options.writeKey) })
  }

  /**
   * Delivers `batch`; never rejects. Failures are reported through the `failed` hook. Once settled
   * (delivered, failed for good, or split), the batch is released. On page hide (`pageHide`), it
   * goes at once (see `#attempt`).
   */
  send(batch: QueueBatch, pageHide?: boolean): Promise<BatchOutcome> {
    return this.#send({ batch, hides: pageHide ? -1 : this.#hides })
  }

  /**
   * The page is hidden or going away: every batch waiting to retry or for a connection slot is
   * attempted at once (see `#attempt`). Its wait is over: that attempt is its next one, never made
   * twice.
   */
  hide(): void {
    this.#hides++
    for (const wake of this.#sleeping) wake()
    this.#limiter.wake()
  }

  async #send(sending: Sending): Promise<BatchOutcome> {
    const { batch } = sending
    let status: number
    try {
      await this.#take(sending)
      status = await this.#attempts(sending)
    } catch (error) {
      if (error instanceof HttpError && error.status === 413 && batch.length > 1) {
        this.#log(`413 for ${count(batch.length, 'message')}; splitting`)
        // The halves get bodies of their own; this batch's last attempt is over.
        const halves = batch.halves()
        batch.release(sending.written)
        return sumOutcomes(await Promise.all(halves.map((part) => this.#send({ batch: part, hides: sending.hides }))))
      }
      // Stopped by close(): in flight (`cause` is its aborted attempt) or not yet sent.
      const outcome = this.#fail(batch, this.#stop.signal.aborted ? new AbortedError('Delivery stopped: close() ran out of time before the batch was delivered.', { cause: error }) : error)
      batch.release(sending.written)
      return outcome
    }
    this.#hooks.delivered(batch, status)
    batch.release(sending.written)
    return { delivered: batch.length, failed: 0 }
  }

  /**
   * Takes a connection slot for the batch's next attempt (`sending.slot`), before its first
   * attempt and after each retry wait: one attempt holds a slot; a batch waiting to retry does
   * not. A batch waiting for its first slot is its `send` call alone, suspended in the limiter
   * (its retry loop is not made yet: a thousand batches waiting cost a thousand small frames);
   * the body is built once it holds the slot, so it holds only its queued strings meanwhile.
   *
   * A batch handed over on page hide, or waiting when the page was hidden (its wait is cut short),
   * takes none: it goes at once, with `keepalive` if it fits what is left of the page's budget
   * (see `#attempt`); its later retries, if the page lives on, as usual.
   */
  async #take(sending: Sending): Promise<void> {
    sending.slot = sending.hides === this.#hides && !(await this.#limiter.acquire())
  }

  async #attempt(sending: Sending): Promise<HttpAnswer> {
    const { slot } = sending
    const size = slot ? Infinity : sending.batch.size
    const keepalive = size <= KEEPALIVE_BODY_BYTES - keepaliveBytes
    if (keepalive) {
      keepaliveBytes += size
      // Compressed, it is built again uncompressed (see #prepare).
      if (typeof sending.prepared?.body !== 'string') sending.prepared = undefined
    }
    try {
      const { body, headers } = (sending.prepared ??= await this.#prepare(sending.batch, keepalive))
      return await attemptRequest(this.#options.transport, {
        url: this.#options.batchUrl, headers, body, timeoutMs: this.#options.timeout, signal: this.#stop.signal, keepalive,
      })
    } finally {
      if (slot) this.#limiter.release()
      if (keepalive) keepaliveBytes -= size
      sending.hides = this.#hides
    }
  }

  /** A keepalive body (the page is going away) is not compressed: the page may be gone first. */
  async #prepare(batch: QueueBatch, keepalive: boolean): Promise<Prepared> {
    const json = batch.body()
    const compressed = this.#options.gzip && !keepalive ? await gzip(json) : undefined
    if (this.#log.enabled) this.#log(`sending ${count(batch.length, 'message')} to ${this.#options.batchUrl} (${count(batch.size, 'byte')}${compressed ? `, ${compressed.byteLength} gzipped` : ''})`)
    if (!compressed) return { body: json, headers: this.#headers }
    return { body: compressed, headers: { ...this.#headers, 'Content-Encoding': 'gzip' } }
  }

  async #attempts(sending: Sending): Promise<number> {
    const options = this.#options
    return retry(
      async () => {
        try {
          const response = await this.#attempt(sending)
          // (Node transport only: the browser build has none.)
          if (response.written) sending.written = Promise.all([sending.written, response.written])
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
        sleep: (ms, signal) => new Promise<void>((wake, fail) => {
          this.#sleeping.add(wake)
          void sleep(ms, signal).then(wake, fail).finally(() => this.#sleeping.delete(wake))
        }).then(() => this.#take(sending)),
        onRetry: ({ attempt, error, delayMs }) => {
          this.#log(`attempt ${attempt} failed (${(error as Error).message}); retrying in ${delayMs} ms`)
          this.#hooks.retrying(sending.batch, attempt, error as AnalyticsError)
        },
      },
    )
  }

  /** Aborts every delivery under way, and any started later: each fails with `AbortedError`. */
  stop(): void {
    this.#stop.abort()
  }

  #fail(batch: QueueBatch, error: unknown): BatchOutcome {
    const attempts = attemptsOf(error)
    if (attempts) this.#log(`${count(batch.length, 'message')} failed after ${count(attempts, 'attempt')}`)
    const reported = isAnalyticsError(error)
      ? error
      : new AnalyticsError('NETWORK', `Delivery failed: ${messageOf(error)}`, { cause: error })
    reported.messages = parsedMessages(batch.texts())
    this.#hooks.failed(reported)
    return { delivered: 0, failed: batch.length }
  }
}

/**
 * A counting semaphore: at most `limit` holders at once, waiters served in order. A waiter is
 * its promise's two functions only: one listener on `signal` rejects every waiter with the
 * signal's reason, so no waiter keeps closures or a listener of its own.
 */
export class Limiter {
  #active = 0
  readonly #waiting: Array<[resolve: (unslotted?: true) => void, reject: (reason: unknown) => void]> = []

  readonly #limit: number
  readonly #signal?: StopSignal

  constructor(limit: number, signal?: StopSignal) {
    this.#limit = limit
    this.#signal = signal
    signal?.addEventListener('abort', () => {
      for (const waiter of this.#waiting.splice(0)) waiter[1](signal.reason)
    })
  }

  /**
   * Resolves when a slot is held, or with `true` when `wake()` lets it go without one; rejects
   * with the signal's reason if aborted before.
   */
  acquire(): Promise<true | void> {
    if (this.#signal?.aborted) return Promise.reject(this.#signal.reason)
    if (this.#active < this.#limit) {
      this.#active++
      return Promise.resolve()
    }
    return new Promise((resolve, reject) => this.#waiting.push([resolve, reject]))
  }

  /** Hands the slot to the first waiter, if any. */
  release(): void {
    const next = this.#waiting.shift()
    if (next) next[0]()
    else this.#active--
  }

  /** Every waiter goes at once, without a slot (its `acquire` resolves with `true`). */
  wake(): void {
    for (const waiter of this.#waiting.splice(0)) waiter[0](true)
  }
}
