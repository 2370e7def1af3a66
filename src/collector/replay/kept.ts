/**
 * Payloads kept for replay (`POST /v1/admin/replay`): each forwarded payload, once its delivery
 * has an outcome (delivered, or failed for good), is kept for the collector's `retention` with
 * when it was accepted and whether it failed. In memory (`MemoryKept`, here) the latest
 * `MAX_KEPT` payloads (and no more than `MAX_KEPT_BYTES` of bodies) of this process; with a
 * queue server, in that server's finished jobs, shared by every process (./kept-jobs.ts). What is
 * dropped, past the bound or the retention, is still counted (by the minute it was accepted in,
 * for `KEPT_COUNTED_MS` past the retention), so a replay can say how many of its window were no
 * longer kept.
 *
 * A payload is known by its exact bytes: a replay that settles keeps it again in its place, with
 * the same acceptance time and its new outcome.
 */

export interface KeptPayload {
  source: string
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

/** Where a replay finds its window. */
export interface KeptWindows {
  /** The payloads of `source` accepted from `from` to `to` (ms, inclusive), failed ones only with `failedOnly`. */
  window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow>
}

/** Where a memory queue keeps what settles. */
export interface KeptStore extends KeptWindows {
  keep(items: readonly KeptPayload[]): void | Promise<void>
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
  return { source, at, failed, body }
}

type Counts = { all: number; failed: number }

export class MemoryKept implements KeptStore {
  /** By `source` and body (a string's hash is computed once, and kept with it by the engine). */
  readonly #items = new Map<string, Map<string, KeptPayload>>()
  #size = 0
  /**
   * The order they were kept in, oldest first from `#head` (a queue: a Map iterated from its
   * start after many deletions walks past every deleted entry). An entry kept again leaves a
   * stale one here, skipped: its Map value is another object.
   */
  #order: KeptPayload[] = []
  #head = 0
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
      let bodies = this.#items.get(item.source)
      if (bodies === undefined) this.#items.set(item.source, (bodies = new Map()))
      const previous = bodies.get(item.body)
      if (previous !== undefined) this.#bytes -= previous.body.length
      else this.#size++
      bodies.set(item.body, item)
      this.#order.push(item)
      this.#bytes += item.body.length
    }
    const oldest = this.now() - this.retention
    // The oldest first: past the retention (up to the first within it), then past the bounds.
    while (this.#head < this.#order.length) {
      const item = this.#order[this.#head]
      const current = this.#items.get(item.source)?.get(item.body) === item
      const over = this.#size > this.bounds.count || this.#bytes > this.bounds.bytes
      if (current && item.at >= oldest && !over) break
      this.#head++
      if (current) this.#drop(item)
    }
    if (this.#head > 1024 && this.#head * 2 > this.#order.length) {
      this.#order = this.#order.slice(this.#head)
      this.#head = 0
    }
  }

  async window(source: string, from: number, to: number, failedOnly: boolean): Promise<KeptWindow> {
    this.#expire()
    const kept = [...(this.#items.get(source)?.values() ?? [])]
      .filter((item) => item.at >= from && item.at <= to && (!failedOnly || item.failed))
      .sort((a, b) => a.at - b.at)
    let unavailable = 0
    for (const [minute, counts] of this.#dropped.get(source) ?? []) {
      if (minute >= Math.floor(from / MINUTE) && minute <= Math.floor(to / MINUTE)) unavailable += failedOnly ? counts.failed : counts.all
    }
    return { kept, unavailable }
  }

  /**
   * Drops every payload past the retention (a replay kept again comes last with its first
   * acceptance time), and forgets the counts of drops past `KEPT_COUNTED_MS` more.
   */
  #expire(): void {
    const now = this.now()
    for (const bodies of this.#items.values()) for (const item of bodies.values()) if (item.at < now - this.retention) this.#drop(item)
    const forgotten = Math.floor((now - this.retention - KEPT_COUNTED_MS) / MINUTE)
    for (const minutes of this.#dropped.values()) for (const minute of minutes.keys()) if (minute < forgotten) minutes.delete(minute)
  }

  #drop(item: KeptPayload): void {
    this.#items.get(item.source)?.delete(item.body)
    this.#size--
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
