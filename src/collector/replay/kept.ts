/**
 * Payloads kept for replay (`POST /v1/admin/replay`): each forwarded payload, once its delivery
 * has an outcome (delivered, or failed for good), is kept for the collector's `retention` with
 * when it was accepted and whether it failed. In memory (`MemoryKept`, here) the latest
 * `MAX_KEPT` payloads (and no more than `MAX_KEPT_BYTES` of bodies) of this process; with a
 * queue server, in that server, shared by every process (state/redis-store.ts,
 * state/postgres-store.ts). What is dropped, past the bound or the retention, is still counted
 * (by the minute it was accepted in, for `KEPT_COUNTED_MS` past the retention), so a replay can
 * say how many of its window were no longer kept.
 *
 * A payload is known by its `webhook-id` (derived from its exact bytes): a replay that settles
 * keeps it again under the same id, with the same acceptance time and its new outcome.
 */
import { webhookIdOf } from '../../webhooks/standard.js'

export interface KeptPayload {
  source: string
  /** The `webhook-id` of `body`. */
  id: string
  /** When the payload was first accepted (ms since the epoch). */
  at: number
  /** Whether its last delivery failed for good. */
  failed: boolean
  /** The exact bytes forwarded. */
  body: string
}

/** A replay window's payloads still kept, and how many of the window were no longer kept. */
export interface KeptWindow {
  kept: KeptPayload[]
  unavailable: number
}

export interface KeptStore {
  keep(items: readonly KeptPayload[]): void | Promise<void>
  /** The payloads of `source` accepted from `from` to `to` (ms, inclusive), failed ones only with `failedOnly`. */
  window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow>
}

/** In memory: the latest payloads kept, at most this many… */
export const MAX_KEPT = 10_000
/** …and at most this many bytes of bodies (UTF-16 code units, as held). */
export const MAX_KEPT_BYTES = 64 * 1024 * 1024
/** How long past the retention the number of payloads dropped is still counted. */
export const KEPT_COUNTED_MS = 7 * 24 * 3600_000
const MINUTE = 60_000

/** A settled delivery as kept: `at`, when it was first accepted. */
export function keptPayload(source: string, body: string, at: number, failed: boolean): KeptPayload {
  return { source, id: webhookIdOf(body), at, failed, body }
}

type Counts = { all: number; failed: number }

export class MemoryKept implements KeptStore {
  /** By `source` and id, oldest kept first. */
  readonly #items = new Map<string, KeptPayload>()
  #bytes = 0
  /** Per source, per minute of acceptance: payloads dropped. */
  readonly #dropped = new Map<string, Map<number, Counts>>()

  constructor(
    private readonly retention: number,
    private readonly now: () => number = Date.now,
    private readonly bounds: { count: number; bytes: number } = { count: MAX_KEPT, bytes: MAX_KEPT_BYTES },
  ) {}

  keep(items: readonly KeptPayload[]): void {
    for (const item of items) {
      const key = `${item.source}\u001f${item.id}`
      const previous = this.#items.get(key)
      if (previous !== undefined) {
        this.#items.delete(key)
        this.#bytes -= previous.body.length
      }
      this.#items.set(key, item)
      this.#bytes += item.body.length
    }
    this.#expire(false)
    for (const [key, item] of this.#items) {
      if (this.#items.size <= this.bounds.count && this.#bytes <= this.bounds.bytes) break
      this.#drop(key, item)
    }
  }

  async window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow> {
    this.#expire(true)
    const kept = [...this.#items.values()]
      .filter((item) => item.source === source && item.at >= from && item.at <= to && (!failedOnly || item.failed))
      .sort((a, b) => a.at - b.at)
    let unavailable = 0
    for (const [minute, counts] of this.#dropped.get(source) ?? []) {
      if (minute >= Math.floor(from / MINUTE) && minute <= Math.floor(to / MINUTE)) unavailable += failedOnly ? counts.failed : counts.all
    }
    return { kept, unavailable }
  }

  /**
   * Drops what is past the retention: the oldest kept, up to the first still within it (`all`:
   * every one; a replay kept again comes last with its first acceptance time), and forgets the
   * counts of drops past `KEPT_COUNTED_MS` more.
   */
  #expire(all: boolean): void {
    const now = this.now()
    for (const [key, item] of this.#items) {
      if (item.at >= now - this.retention) {
        if (all) continue
        break
      }
      this.#drop(key, item)
    }
    if (!all) return
    const forgotten = Math.floor((now - this.retention - KEPT_COUNTED_MS) / MINUTE)
    for (const minutes of this.#dropped.values()) for (const minute of minutes.keys()) if (minute < forgotten) minutes.delete(minute)
  }

  #drop(key: string, item: KeptPayload): void {
    this.#items.delete(key)
    this.#bytes -= item.body.length
    let minutes = this.#dropped.get(item.source)
    if (minutes === undefined) this.#dropped.set(item.source, (minutes = new Map()))
    const minute = Math.floor(item.at / MINUTE)
    const counts = minutes.get(minute) ?? { all: 0, failed: 0 }
    counts.all++
    if (item.failed) counts.failed++
    minutes.set(minute, counts)
  }
}
