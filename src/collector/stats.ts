/**
 * The collector's counters, in one place with one method per event, overall and per source.
 * Each part gets only the methods it needs (`IngestTally` for the handler, `DeliveryTally` for a
 * delivery queue); `snapshot()` is the only way to read them.
 */

/** One source's counts. */
export interface SourceCounts {
  /** Messages accepted. */
  received: number
  /** Accepted messages not forwarded: no enabled destination, or turned off by `integrations`. */
  skipped: number
  /** Accepted messages not forwarded because they break the source's tracking plan. */
  blocked: number
  /** Payloads a webhook URL accepted (messages, deletions and audience identifies). */
  forwarded: number
  /** Payloads that failed for good. */
  failed: number
  /** Failed attempts that were retried. */
  retries: number
  /** Messages not forwarded because their messageId was accepted within the last 24 hours. */
  deduplicated: number
}

export interface IngestTally {
  request(): void
  rejected(): void
  /** `at`: the `receivedAt` the messages were given; `blocked`: not forwarded because of a tracking plan. */
  accepted(source: string, received: number, forwarding: number, at?: string, blocked?: number): void
  deduplicated(source: string, count: number): void
  /** An analytics.js metrics request (`/v1/m`) was answered. */
  metrics(): void
}

export interface DeliveryTally {
  deduplicated(source: string, count: number): void
  forwarded(source: string): void
  failed(source: string, count?: number): void
  retried(source: string): void
}

const zero = (): SourceCounts => ({ received: 0, skipped: 0, blocked: 0, forwarded: 0, failed: 0, retries: 0, deduplicated: 0 })

export class Tally implements IngestTally, DeliveryTally {
  #requests = 0
  #rejected = 0
  #metrics = 0
  #lastReceivedAt: string | undefined
  readonly #sources = new Map<string, SourceCounts>()

  readonly #mirror: ((key: string, delta: number) => void) | undefined

  /** `mirror` also receives every per-source increment (`${source}|${count}`): shared counters. */
  constructor(sources: readonly string[], mirror?: (key: string, delta: number) => void) {
    for (const name of sources) this.#sources.set(name, zero())
    this.#mirror = mirror
  }

  request(): void {
    this.#requests++
  }

  rejected(): void {
    this.#rejected++
  }

  accepted(source: string, received: number, forwarding: number, at?: string, blocked = 0): void {
    if (at !== undefined) this.#lastReceivedAt = at
    this.#add(source, 'received', received)
    this.#add(source, 'skipped', received - forwarding - blocked)
    this.#add(source, 'blocked', blocked)
  }

  deduplicated(source: string, count: number): void {
    this.#add(source, 'deduplicated', count)
  }

  metrics(): void {
    this.#metrics++
  }

  forwarded(source: string): void {
    this.#add(source, 'forwarded', 1)
  }

  failed(source: string, count = 1): void {
    this.#add(source, 'failed', count)
  }

  retried(source: string): void {
    this.#add(source, 'retries', 1)
  }

  #add(source: string, count: keyof SourceCounts, delta: number): void {
    if (delta === 0) return
    this.#of(source)[count] += delta
    this.#mirror?.(`${source}|${count}`, delta)
  }

  /** A copy of every count: totals, and each source's own. */
  snapshot(): {
    requests: number
    rejected: number
    metrics: number
    lastReceivedAt: string | undefined
    totals: SourceCounts
    sources: Record<string, SourceCounts>
  } {
    const totals = zero()
    const sources: Record<string, SourceCounts> = {}
    for (const [name, counts] of this.#sources) {
      sources[name] = { ...counts }
      for (const key in totals) totals[key as keyof SourceCounts] += counts[key as keyof SourceCounts]
    }
    return { requests: this.#requests, rejected: this.#rejected, metrics: this.#metrics, lastReceivedAt: this.#lastReceivedAt, totals, sources }
  }

  #of(source: string): SourceCounts {
    let counts = this.#sources.get(source)
    if (counts === undefined) this.#sources.set(source, (counts = zero()))
    return counts
  }
}
