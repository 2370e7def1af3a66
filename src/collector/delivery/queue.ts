/**
 * The seam between accepting a message and delivering it: a `DeliveryQueue` holds deliveries
 * until a Webhooks destination accepts them or they fail for good. The collector chooses one
 * implementation at construction: `MemoryQueue` (the embedded default; this process's memory)
 * or a durable one in a queue server. Each delivery travels as the exact JSON text to forward,
 * serialised once at ingest: nothing re-parses it, so what the sender wrote is what is signed.
 */
import type { UrlResult, WebhookDestination, WebhookEventType } from '../../webhooks/index.js'
import { valueWithin } from '../settles-within.js'

/** How a delivery reports its progress (the console's record of it). Every method is optional to call. */
export interface DeliveryTrace {
  attempt(attempt: number, urls: readonly string[]): void
  retry(attempt: number, results: readonly UrlResult[], delayMs: number): void
  settled(delivered: boolean, results: readonly UrlResult[]): void
  /**
   * A URL still answering when another URL accepted the message (`pending` in `settled`'s
   * results) answered or failed: its outcome. Reported after `settled`; it changes nothing else.
   */
  late(result: UrlResult): void
}

export interface QueuedDelivery {
  /** The source's name: whose destination delivers it. */
  source: string
  /** The payload's `type`, for logs. */
  type: WebhookEventType
  /** The exact body to POST and sign. */
  body: string
  /** The message's `messageId` (not for deletions and audience payloads): de-duplication. */
  messageId?: string
  /** Called once with whether it was delivered (memory mode only; for `Dispatch.settled`). */
  onSettled?: (delivered: boolean) => void
  /** Told of each attempt, retry, the outcome and each late URL outcome (memory mode). */
  trace?: DeliveryTrace
  /**
   * Durable mode: names this delivery's record for the queue's `traces` (see `TraceSink`). It
   * travels with the job, so whichever process makes an attempt reports it under this id.
   */
  traceId?: string
  /** A replay: when the payload was first accepted (ms since the epoch), kept with it again. */
  acceptedAt?: number
  /** A replay: whether the payload was kept as failed (its outcome before this replay). */
  wasFailed?: boolean
  /** A replay to one URL: the indexes of the URLs it goes to (default: all). */
  urls?: number[]
}

/**
 * Durable mode: where the process making an attempt reports the progress of a delivery that
 * carries a `traceId` (a delivery accepted by one process may be attempted by any other).
 */
export type TraceSink = (traceId: string, delivery?: TracedDelivery) => DeliveryTrace

/** What a `TraceSink` is told of the delivery it reports: enough to list it where it was not (a failure past the follow bound). */
export interface TracedDelivery {
  source: string
  /** The exact body forwarded. */
  body: string
}

/** Deliveries not settled yet, and those among them waiting for a retry after a failed attempt. */
export interface BacklogCounts {
  pending: number
  retrying: number
}

export interface DrainOutcome {
  /** Whether every delivery settled (memory) or every attempt in flight finished (durable). */
  drained: boolean
  /**
   * Memory: deliveries still held at the bound, which then failed (exactly the rise in `failed`
   * from then on). Durable: 0, since whatever was not finished stays in the queue server.
   */
  pending: number
  /**
   * Durable: the attempts still in flight at the bound, which were stopped (their deliveries
   * stay in the queue server). Absent in memory, where what was left is `pending`.
   */
  stopped?: number
  /** Durable: `false` when the queue server was never reached (nothing was taken from it). */
  reached?: boolean
}

/**
 * The queue server did not take deliveries: not within `QUEUE_WRITE_WAIT_MS` (unreachable, or
 * far too slow), or it refused or lost the write. Ingest answers 503 with Retry-After instead of
 * holding the sender's request open, or answering 500.
 */
export class QueueUnavailableError extends Error {
  override name = 'QueueUnavailableError'
  /**
   * A write that was neither taken in time nor refused: settles with whether it reached the
   * server afterwards (its deliveries are then delivered all the same). Absent otherwise.
   */
  landed?: Promise<boolean>
}

/** How long a request waits for the queue server, all told: the collector's start-up, a connection, the write. */
export const QUEUE_WRITE_WAIT_MS = 5_000

/** The bound of a wait that starts now (ms since the epoch): `QUEUE_WRITE_WAIT_MS` from now. */
export const writeDeadline = (): number => Date.now() + QUEUE_WRITE_WAIT_MS

export interface WriteWait {
  /** With it, also when the write fails (PostgreSQL gone refuses at once), after `report`. */
  failure?: { closing(): boolean; report(error: Error): void; what?: string }
  /** When the wait ends (ms since the epoch): a request's one deadline (default: 5 s from now). */
  by?: number
  /** A write of deliveries: a timeout's error carries `landed`. */
  lands?: boolean
}

/**
 * `write`, or a `QueueUnavailableError` once the deadline `by` has passed (BullMQ's connections
 * retry for ever: without a bound a request would wait as long as the server is down; a write
 * that lands later is a job like any other, the sender's retry de-duplicated). With `failure`,
 * also when the write fails, after `failure.report` (not called when `failure.closing()`: the
 * collector's `close()` dropped the connection).
 */
export async function writeInTime<T>(write: Promise<T>, wait: WriteWait = {}): Promise<T> {
  const { failure, by = writeDeadline() } = wait
  const got = await valueWithin(failure === undefined ? write : write.catch((error: Error) => {
    const what = failure.what ?? 'take the deliveries'
    if (failure.closing()) throw new QueueUnavailableError(`The collector closed before the queue server could ${what}.`, { cause: error })
    failure.report(error)
    throw new QueueUnavailableError(`The queue server did not ${what} (${error.message}).`, { cause: error })
  }), Math.max(0, by - Date.now()))
  if (got !== undefined) return got.value
  const late = new QueueUnavailableError(`The queue server did not answer within ${QUEUE_WRITE_WAIT_MS / 1000} s.`)
  if (wait.lands) late.landed = write.then(() => true, () => false)
  throw late
}

export interface EnqueueOptions {
  ignoreLimit?: boolean
  /** When the queue server must have taken them (ms since the epoch; default: 5 s from the call). */
  by?: number
}

export interface DeliveryQueue {
  /**
   * `true` when deliveries live in a queue server (any process may deliver them, so `onSettled`
   * is never called); `false` in memory, where each delivery's `onSettled` is called once.
   */
  readonly durable: boolean
  /**
   * Resolves once the queue can take deliveries without waiting (a queue server: connected);
   * rejects when it cannot be used (already reported). Absent: at once.
   */
  ready?(): Promise<void>
  /**
   * Takes the deliveries of one request as a unit: all of them, or none when they do not fit
   * under the source's backlog limit (`false`: the caller answers 503). Resolves once they are
   * held (in memory at once; in a queue server once it has them, by `by`: a request's deadline,
   * see `writeInTime`). `ignoreLimit` is for the admin endpoints.
   */
  enqueue(deliveries: readonly QueuedDelivery[], options?: EnqueueOptions): boolean | Promise<boolean>
  /**
   * Settings changed (the console): the source's next deliveries go to `destination`. Those
   * already with the previous destination finish there.
   */
  setDestination(source: string, destination: WebhookDestination): void
  /** Backlog of one source, or of all. */
  counts(source?: string): BacklogCounts
  /**
   * Counters every process on the same queue server shares (`${source}|${name}` → value), for
   * `GET /v1/stats`. Absent in memory: this process's own counters are the whole story.
   */
  sharedCounts?(by?: number): Promise<Record<string, number>>
  /**
   * Stops taking deliveries, lets attempts in flight finish within `timeoutMs`, then stops.
   * Safe to call twice.
   */
  close(timeoutMs: number): Promise<DrainOutcome>
}
