/**
 * What the console shows: a bounded, in-memory record of the latest messages each collector
 * process accepted (the live view) and of their deliveries (every attempt's outcome per URL, the
 * next retry, the outcome), plus delivered / retrying / failed counts per minute for the last
 * hour. Each change bumps a version number, so a reader asks only for what changed since its
 * last look (`changedSince`), and is told when there is a change (`subscribe`). With a queue
 * server, a delivery's record is also known by its `traceId` (`traced`), under which any process
 * reports its attempts (see console/shared.ts).
 */
import type { UrlResult, WebhookEventType } from '../../webhooks/index.js'
import type { DeliveryTrace } from '../delivery/queue.js'

export type { DeliveryTrace }

export type Outcome = 'not forwarded' | 'blocked' | 'queued' | 'retrying' | 'delivered' | 'failed'

export interface UrlOutcome {
  url: string
  status?: number
  error?: string
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
  receivedAt: string
  /** Accepted by another collector process on the same queue server (heard on its bus). */
  remote?: true
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

export type DeferredTrace = DeliveryTrace & { bind(target: DeliveryTrace): void }

/** A trace whose record is known only later: what it is told before `bind` is replayed then. */
export function deferredTrace(): DeferredTrace {
  let target: DeliveryTrace | undefined
  const early: Array<(t: DeliveryTrace) => void> = []
  const call = (f: (t: DeliveryTrace) => void) => (target ? f(target) : early.push(f))
  return {
    attempt: (...args) => call((t) => t.attempt(...args)),
    retry: (...args) => call((t) => t.retry(...args)),
    settled: (...args) => call((t) => t.settled(...args)),
    bind(t) {
      target = t
      for (const f of early.splice(0)) f(t)
    },
  }
}

export interface MinuteCounts {
  /** The minute's start (ISO 8601). */
  at: string
  delivered: number
  retrying: number
  failed: number
}

interface Entry {
  record: MessageRecord
  /** The exact body forwarded, for a retry by hand. */
  body: string | undefined
  /** Attempts made before the current round (manual retries continue the numbering). */
  offset: number
  /** The name its attempts are reported under, in durable mode. */
  traceId?: string
}

/** What is forwarded (the exact body, and its traceId in durable mode), or why nothing is. */
export type Forward = { body: string | undefined; traceId?: string } | { outcome: 'not forwarded' | 'blocked'; reason: string }

const MINUTE = 60_000
const HOUR_MINUTES = 60
/** Attempts kept per message (the newest). */
const MAX_ATTEMPTS = 50

function outcomeOf(result: UrlResult): UrlOutcome {
  const out: UrlOutcome = { url: result.url }
  if (result.status !== undefined) out.status = result.status
  if (result.pending) out.error = 'still answering (another URL accepted the message)'
  else if (result.error !== undefined) out.error = result.error.message
  return out
}

export class ConsoleRecorder {
  readonly #entries = new Map<string, Entry>()
  readonly #byTrace = new Map<string, string>()
  readonly #minutes = new Map<number, MinuteCounts>()
  readonly #limit: number
  readonly #now: () => number
  readonly #listeners = new Set<() => void>()
  #sequence = 0
  #version = 0

  constructor(options: { limit?: number; now?: () => number } = {}) {
    this.#limit = options.limit ?? 500
    this.#now = options.now ?? Date.now
  }

  get version(): number {
    return this.#version
  }

  /** Calls `listener` after each change (a new record or a record changed); returns what stops it. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #changed(): void {
    for (const listener of this.#listeners) listener()
  }

  /**
   * Records an accepted message. `body` is the text forwarded (absent when it is not forwarded,
   * and then `reason` says why). Returns the trace its delivery reports to. `remote`: accepted by
   * another process; `note`: why a forwarded message's delivery is not followed.
   */
  accepted(source: string, message: Record<string, unknown>, forward: Forward, options: { remote?: boolean; note?: string } = {}): DeliveryTrace {
    const id = String(++this.#sequence)
    const name = message.type === 'track' ? message.event : message.name
    const record: MessageRecord = {
      id,
      version: ++this.#version,
      source,
      type: String(message.type),
      ...(typeof name === 'string' && { name }),
      ...(typeof message.userId === 'string' && { userId: message.userId }),
      receivedAt: typeof message.receivedAt === 'string' ? message.receivedAt : new Date(this.#now()).toISOString(),
      ...(options.remote && { remote: true as const }),
      message,
      delivery: 'body' in forward
        ? { outcome: 'queued', ...(options.note !== undefined && { reason: options.note }), attempts: [] }
        : { outcome: forward.outcome, reason: forward.reason, attempts: [] },
    }
    const traceId = 'body' in forward ? forward.traceId : undefined
    this.#entries.set(id, { record, body: 'body' in forward ? forward.body : undefined, offset: 0, ...(traceId !== undefined && { traceId }) })
    if (traceId !== undefined) this.#byTrace.set(traceId, id)
    if (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next().value!
      const { traceId: gone } = this.#entries.get(oldest)!
      if (gone !== undefined) this.#byTrace.delete(gone)
      this.#entries.delete(oldest)
    }
    this.#changed()
    return this.#trace(id)
  }

  /** Records that changed after `version`, newest first, at most `limit`. */
  changedSince(version: number, limit = this.#limit): MessageRecord[] {
    const out: MessageRecord[] = []
    for (const { record } of this.#entries.values()) if (record.version > version) out.push(record)
    return out.reverse().slice(0, limit)
  }

  get(id: string): MessageRecord | undefined {
    return this.#entries.get(id)?.record
  }

  /** The trace of the record known by `traceId`, or `undefined` when none is held. */
  traced(traceId: string): DeliveryTrace | undefined {
    const id = this.#byTrace.get(traceId)
    return id === undefined ? undefined : this.#trace(id)
  }

  /**
   * Prepares a failed delivery to go again: its record returns to `queued` and the next attempts
   * continue its numbering. Returns the body, the trace and the traceId (durable mode), or
   * `undefined` when the record is unknown (no longer held), holds no body or has not failed.
   */
  retryByHand(id: string): { source: string; type: WebhookEventType; body: string; trace: DeliveryTrace; traceId?: string } | undefined {
    const entry = this.#entries.get(id)
    if (entry === undefined || entry.body === undefined || entry.record.delivery.outcome !== 'failed') return undefined
    this.#reopen(entry)
    const { record, traceId } = entry
    return { source: record.source, type: record.type as WebhookEventType, body: entry.body, trace: this.#trace(id), ...(traceId !== undefined && { traceId }) }
  }

  /** Another process retried the delivery known by `traceId` by hand: its record here goes on too. */
  reopened(traceId: string): void {
    const entry = this.#entries.get(this.#byTrace.get(traceId) ?? '')
    if (entry !== undefined) this.#reopen(entry)
  }

  #reopen(entry: Entry): void {
    const { record } = entry
    entry.offset = record.delivery.attempts.at(-1)?.attempt ?? 0
    this.#change(record, () => {
      record.delivery.outcome = 'queued'
      delete record.delivery.nextRetryAt
    })
  }

  /** Delivered / retrying / failed per minute, the last hour, oldest first (60 entries). */
  activity(): MinuteCounts[] {
    const current = Math.floor(this.#now() / MINUTE)
    const out: MinuteCounts[] = []
    for (let minute = current - HOUR_MINUTES + 1; minute <= current; minute++) {
      out.push(this.#minutes.get(minute) ?? { at: new Date(minute * MINUTE).toISOString(), delivered: 0, retrying: 0, failed: 0 })
    }
    return out
  }

  #count(series: 'delivered' | 'retrying' | 'failed'): void {
    const minute = Math.floor(this.#now() / MINUTE)
    let counts = this.#minutes.get(minute)
    if (counts === undefined) {
      this.#minutes.set(minute, (counts = { at: new Date(minute * MINUTE).toISOString(), delivered: 0, retrying: 0, failed: 0 }))
      for (const old of this.#minutes.keys()) if (old <= minute - HOUR_MINUTES) this.#minutes.delete(old)
    }
    counts[series]++
  }

  #change(record: MessageRecord, update: () => void): void {
    update()
    record.version = ++this.#version
    this.#changed()
  }

  #trace(id: string): DeliveryTrace {
    const withRecord = (update: (entry: Entry) => void) => {
      const entry = this.#entries.get(id)
      if (entry) this.#change(entry.record, () => update(entry))
    }
    const attemptOf = (entry: Entry, attempt: number) => {
      const { attempts } = entry.record.delivery
      for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i].attempt === entry.offset + attempt) return attempts[i]
      return undefined
    }
    const fill = (entry: Entry, results: readonly UrlResult[]) => {
      for (const result of results) {
        const record = result.attempt > 0 ? attemptOf(entry, result.attempt) : undefined
        if (record) record.results = record.results.map((r) => (r.url === result.url ? outcomeOf(result) : r))
      }
    }
    return {
      // Reports of several processes may arrive out of order (durable mode): attempts are kept in
      // order of their number, and a retry never overrides what a later attempt said.
      attempt: (attempt, urls) => withRecord((entry) => {
        const { attempts } = entry.record.delivery
        const number = entry.offset + attempt
        let at = attempts.length
        while (at > 0 && attempts[at - 1].attempt > number) at--
        attempts.splice(at, 0, { attempt: number, at: new Date(this.#now()).toISOString(), results: urls.map((url) => ({ url, error: 'no answer yet' })) })
        if (attempts.length > MAX_ATTEMPTS) attempts.splice(0, attempts.length - MAX_ATTEMPTS)
      }),
      retry: (attempt, results, delayMs) => {
        this.#count('retrying')
        withRecord((entry) => {
          fill(entry, results)
          if ((entry.record.delivery.attempts.at(-1)?.attempt ?? 0) > entry.offset + attempt) return
          entry.record.delivery.outcome = 'retrying'
          entry.record.delivery.nextRetryAt = new Date(this.#now() + delayMs).toISOString()
        })
      },
      settled: (delivered, results) => {
        this.#count(delivered ? 'delivered' : 'failed')
        withRecord((entry) => {
          fill(entry, results)
          entry.record.delivery.outcome = delivered ? 'delivered' : 'failed'
          delete entry.record.delivery.nextRetryAt
        })
      },
    }
  }
}
