/**
 * What the console records of one message (`MessageRecord`: the message, and its delivery's
 * attempts and outcome) and how the recorder holds it (`Entry`, which makes the record only when
 * it is read or changed).
 */
import { maskUrl } from '../../secrets.js'
import type { UrlResult } from '../../webhooks/index.js'

export type Outcome = 'not forwarded' | 'blocked' | 'queued' | 'retrying' | 'delivered' | 'failed'

export interface UrlOutcome {
  url: string
  /** The receiver's HTTP status, when it answered. */
  status?: number
  /** Why this URL did not accept the message (or `no answer yet`, `still answering…`). */
  error?: string
  /** The first 1,024 bytes of the receiver's answer body, as text. */
  answer?: string
  /** From the request's start to the answer (and its first KB), or to the failure, in ms. */
  durationMs?: number
}

export interface AttemptRecord {
  /** Counted across manual retries: the first attempt of a retry by hand follows the last one. */
  attempt: number
  /** When the attempt started (ISO 8601). */
  at: string
  results: UrlOutcome[]
}

export interface MessageRecord {
  /** The record's id (a number, increasing with arrival, as a string). */
  id: string
  /** Bumped on every change. */
  version: number
  source: string
  type: string
  /** The track event, or the page/screen name. */
  name?: string
  userId?: string
  anonymousId?: string
  receivedAt: string
  /** Accepted by another collector process on the same queue server (heard on its bus). */
  remote?: true
  /** Not an accepted message: a payload of a deletion request or of an audience sync (`name`: the audience). */
  origin?: Origin
  /** A replay (`POST /v1/admin/replay`) of a payload forwarded before: the same bytes again. */
  replay?: true
  /** The message as accepted. */
  message: Record<string, unknown>
  delivery: {
    outcome: Outcome
    /** Why it was not forwarded or was blocked, or why its delivery is not followed. */
    reason?: string
    nextRetryAt?: string
    attempts: AttemptRecord[]
  }
}

/** What is forwarded (the exact body, and its traceId in durable mode), or why nothing is. */
export type Forward = { body: string | undefined; traceId?: string } | { outcome: 'not forwarded' | 'blocked'; reason: string }

/** The admin request a recorded payload comes from (see admin/requests.ts). */
export type Origin = 'deletion' | 'audience'

/**
 * Why a forwarded message's delivery is not followed, whether another process accepted it, and
 * (an admin request's payload) where it comes from and its name (the audience's).
 */
export interface AcceptOptions {
  remote?: boolean
  note?: string
  origin?: Origin
  name?: string
  /** A replay of a payload forwarded before. */
  replay?: boolean
}

/**
 * A recorded message. Its `MessageRecord` is made when it is first read or changed: at a high
 * rate most messages are dropped (past the limit) before anyone looks.
 */
export class Entry {
  #record: MessageRecord | undefined
  /** Attempts made before the current round (manual retries continue the numbering). */
  offset = 0

  constructor(
    readonly id: string,
    public version: number,
    readonly source: string,
    readonly message: Record<string, unknown>,
    readonly forward: Forward,
    /** The message's `receivedAt`, or when it was recorded (ms). */
    readonly receivedAt: string | number,
    readonly options: AcceptOptions,
  ) {}

  /** The exact body forwarded (what each receiver got), for a retry by hand and `GET /v1/admin/messages/{id}`. */
  get body(): string | undefined {
    return 'body' in this.forward ? this.forward.body : undefined
  }

  /** The name its attempts are reported under, in durable mode. */
  get traceId(): string | undefined {
    return 'body' in this.forward ? this.forward.traceId : undefined
  }

  get record(): MessageRecord {
    if (this.#record !== undefined) return this.#record
    const { message, forward, options } = this
    const name = options.name ?? (message.type === 'track' ? message.event : message.name)
    return (this.#record = {
      id: this.id,
      version: this.version,
      source: this.source,
      type: String(message.type),
      ...(typeof name === 'string' && { name }),
      ...(typeof message.userId === 'string' && { userId: message.userId }),
      ...(typeof message.anonymousId === 'string' && { anonymousId: message.anonymousId }),
      receivedAt: typeof this.receivedAt === 'string' ? this.receivedAt : new Date(this.receivedAt).toISOString(),
      ...(options.remote && { remote: true as const }),
      ...(options.origin && { origin: options.origin }),
      ...(options.replay && { replay: true as const }),
      message,
      delivery: 'body' in forward
        ? { outcome: 'queued', ...(options.note !== undefined && { reason: options.note }), attempts: [] }
        : { outcome: forward.outcome, reason: forward.reason, attempts: [] },
    })
  }

  /** The record after a change (`version` is the new one). */
  changed(version: number): void {
    this.version = version
    if (this.#record !== undefined) this.#record.version = version
  }
}

/**
 * `record` as the admin endpoints answer it: each URL with its credentials masked (`?token=…1234`,
 * as logs show them). The record itself keeps the URLs whole: a URL's outcome is matched to its
 * attempt by the URL, and two URLs may look the same masked.
 */
export function shownRecord(record: MessageRecord): MessageRecord {
  const { attempts } = record.delivery
  if (attempts.every((a) => a.results.every((r) => maskUrl(r.url) === r.url))) return record
  const shown = attempts.map((a) => ({ ...a, results: a.results.map((r) => ({ ...r, url: maskUrl(r.url) })) }))
  return { ...record, delivery: { ...record.delivery, attempts: shown } }
}

/** A URL's outcome while its attempt is under way. */
export const NO_ANSWER_YET = 'no answer yet'
/** A URL's outcome while it is still answering after another URL accepted the message (its `late` outcome replaces it). */
export const STILL_ANSWERING = 'still answering (another URL accepted the message)'

export function outcomeOf(result: UrlResult): UrlOutcome {
  const out: UrlOutcome = { url: result.url }
  if (result.status !== undefined) out.status = result.status
  if (result.answer !== undefined) out.answer = result.answer
  if (result.durationMs !== undefined) out.durationMs = result.durationMs
  if (result.pending) out.error = STILL_ANSWERING
  else if (result.error !== undefined) out.error = result.error.message
  return out
}

/** An outcome the URL's own answer (or failure) is still to replace. */
const awaited = (outcome: UrlOutcome) => outcome.status === undefined && (outcome.error === NO_ANSWER_YET || outcome.error === STILL_ANSWERING)

/** The record of attempt `attempt` of the current round, if it is still kept. */
export function attemptOf(entry: Entry, attempt: number): AttemptRecord | undefined {
  const { attempts } = entry.record.delivery
  for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i].attempt === entry.offset + attempt) return attempts[i]
  return undefined
}

/**
 * Each URL's outcome, in the record of the attempt that got it. A `pending` one never hides the
 * URL's own outcome, should that have been heard first.
 */
export function fill(entry: Entry, results: readonly UrlResult[]): void {
  for (const result of results) {
    const record = result.attempt > 0 ? attemptOf(entry, result.attempt) : undefined
    if (record) record.results = record.results.map((r) => (r.url === result.url && (!result.pending || awaited(r)) ? outcomeOf(result) : r))
  }
}

