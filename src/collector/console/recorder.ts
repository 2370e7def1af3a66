/**
 * What the console shows: a bounded, in-memory record of the latest messages each collector
 * process accepted (the live view; with the payloads of deletion requests and audience syncs,
 * admin/requests.ts) and of their deliveries (every attempt's outcome per URL, the
 * next retry, the outcome), plus delivered / retrying / failed counts per minute for the last
 * hour. Each change bumps a version number, so a reader asks only for what changed since its
 * last look (`changedSince`), and is told when there is a change (`subscribe`). With a queue
 * server, a delivery's record is also known by its `traceId` (`traced`), under which any process
 * reports its attempts (see console/shared.ts).
 */
import type { WebhookEventType } from '../../webhooks/index.js'
import type { DeliveryTrace } from '../delivery/queue.js'
import { Entry, fill, NO_ANSWER_YET, type AcceptOptions, type Forward, type MessageRecord } from './records.js'

export type { DeliveryTrace }
export type { AcceptOptions, AttemptRecord, Forward, MessageRecord, Origin, Outcome, UrlOutcome } from './records.js'

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
    late: (...args) => call((t) => t.late(...args)),
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

const MINUTE = 60_000
const HOUR_MINUTES = 60
/** Attempts kept per message (the newest). */
const MAX_ATTEMPTS = 50

export class ConsoleRecorder {
  readonly #entries = new Map<string, Entry>()
  readonly #byTrace = new Map<string, string>()
  readonly #minutes = new Map<number, MinuteCounts>()
  readonly #limit: number
  readonly #now: () => number
  readonly #listeners = new Set<() => void>()
  #sequence = 0
  #version = 0
  #unlisted = 0
  /**
   * Names this process's record: versions and ids start again at 1 after a restart, so a reader's
   * cursor from an earlier process could otherwise pass for one of this process's.
   */
  readonly boot: string = crypto.randomUUID()

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
  accepted(source: string, message: Record<string, unknown>, forward: Forward, options: AcceptOptions = {}): DeliveryTrace {
    const id = String(++this.#sequence)
    const receivedAt = typeof message.receivedAt === 'string' ? message.receivedAt : this.#now()
    const entry = new Entry(id, ++this.#version, source, message, forward, receivedAt, options)
    this.#entries.set(id, entry)
    const { traceId } = entry
    if (traceId !== undefined) this.#byTrace.set(traceId, id)
    if (this.#entries.size > this.#limit) {
      const oldest = this.#entries.keys().next().value!
      const gone = this.#entries.get(oldest)!.traceId
      if (gone !== undefined) this.#byTrace.delete(gone)
      this.#entries.delete(oldest)
    }
    this.#changed()
    return this.#trace(id)
  }

  /** Records that changed after `version`, newest first, at most `limit`. */
  changedSince(version: number, limit = this.#limit): MessageRecord[] {
    const out: Entry[] = []
    for (const entry of this.#entries.values()) if (entry.version > version) out.push(entry)
    return out.reverse().slice(0, limit).map((entry) => entry.record)
  }

  /**
   * The first `limit` changes after `since` (oldest change first) of the records `keep` selects,
   * listed newest first. `version` is the cursor to ask from next: the last change sent when
   * there are more (`more`), else the current version. A cursor past a record that was not sent
   * would lose it for good, so a burst larger than `limit` is read in several pages.
   */
  changesPage(since: number, limit: number, keep: (record: MessageRecord) => boolean): { version: number; messages: MessageRecord[]; more: boolean } {
    const changed: Entry[] = []
    for (const entry of this.#entries.values()) if (entry.version > since && keep(entry.record)) changed.push(entry)
    const more = changed.length > limit
    const page = more ? changed.sort((a, b) => a.version - b.version).slice(0, limit) : changed
    const version = more ? page[page.length - 1].version : this.#version
    // Newest first, as every answer lists them (ids increase with arrival).
    const messages = page.sort((a, b) => Number(b.id) - Number(a.id)).map((entry) => entry.record)
    return { version, messages, more }
  }

  get(id: string): MessageRecord | undefined {
    return this.#entries.get(id)?.record
  }

  /** The exact body forwarded for record `id` (what each receiver got), when it is held. */
  payloadOf(id: string): string | undefined {
    return this.#entries.get(id)?.body
  }

  /** The traceId of record `id` (durable mode), which names its delivery in every process. */
  traceIdOf(id: string): string | undefined {
    return this.#entries.get(id)?.traceId
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
    this.#change(entry, () => {
      record.delivery.outcome = 'queued'
      delete record.delivery.nextRetryAt
    })
  }

  /**
   * Durable mode: `count` deliveries past the follow bound succeeded, in this process or another
   * (console/shared.ts): never listed, they are counted (`unlistedCount`) and charted as delivered.
   */
  unlisted(count: number): void {
    this.#unlisted += count
    this.#count('delivered', count)
    this.#changed()
  }

  /** Successful deliveries never listed (past the follow bound), since this process started. */
  get unlistedCount(): number {
    return this.#unlisted
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

  #count(series: 'delivered' | 'retrying' | 'failed', n = 1): void {
    const minute = Math.floor(this.#now() / MINUTE)
    let counts = this.#minutes.get(minute)
    if (counts === undefined) {
      this.#minutes.set(minute, (counts = { at: new Date(minute * MINUTE).toISOString(), delivered: 0, retrying: 0, failed: 0 }))
      for (const old of this.#minutes.keys()) if (old <= minute - HOUR_MINUTES) this.#minutes.delete(old)
    }
    counts[series] += n
  }

  #change(entry: Entry, update: () => void): void {
    update()
    entry.changed(++this.#version)
    this.#changed()
  }

  /** Changes the record `id` if it is still held. */
  #update(id: string, update: (entry: Entry) => void): void {
    const entry = this.#entries.get(id)
    if (entry) this.#change(entry, () => update(entry))
  }

  #trace(id: string): DeliveryTrace {
    return {
      // Reports of several processes may arrive out of order (durable mode): attempts are kept in
      // order of their number, and a retry never overrides what a later attempt said.
      attempt: (attempt, urls) => this.#update(id, (entry) => {
        const { attempts } = entry.record.delivery
        const number = entry.offset + attempt
        let at = attempts.length
        while (at > 0 && attempts[at - 1].attempt > number) at--
        // The newest attempt: the retry that was awaited has started (its time is no longer ahead).
        if (at === attempts.length) delete entry.record.delivery.nextRetryAt
        attempts.splice(at, 0, { attempt: number, at: new Date(this.#now()).toISOString(), results: urls.map((url) => ({ url, error: NO_ANSWER_YET })) })
        if (attempts.length > MAX_ATTEMPTS) attempts.splice(0, attempts.length - MAX_ATTEMPTS)
      }),
      retry: (attempt, results, delayMs) => {
        this.#count('retrying')
        this.#update(id, (entry) => {
          fill(entry, results)
          if ((entry.record.delivery.attempts.at(-1)?.attempt ?? 0) > entry.offset + attempt) return
          entry.record.delivery.outcome = 'retrying'
          entry.record.delivery.nextRetryAt = new Date(this.#now() + delayMs).toISOString()
        })
      },
      settled: (delivered, results) => {
        this.#count(delivered ? 'delivered' : 'failed')
        this.#update(id, (entry) => {
          fill(entry, results)
          entry.record.delivery.outcome = delivered ? 'delivered' : 'failed'
          delete entry.record.delivery.nextRetryAt
        })
      },
      // A URL still answering when another delivered the message: its outcome replaces `pending`.
      late: (result) => this.#update(id, (entry) => fill(entry, [result])),
    }
  }
}
