/**
 * De-duplication in memory (the embedded default): the (source, messageId) pairs accepted in the
 * last 24 hours, bounded: past `maxEntries` the oldest are forgotten first, so under a flood the
 * window is shorter than 24 hours rather than memory unbounded. With a queue server, the ids
 * claimed in that server (`SharedState.claim`, shared by every process) are used instead.
 */
/** How long a (source, messageId) is remembered. */
export const DEDUP_TTL_MS = 24 * 60 * 60 * 1000

export class RecentMessageIds {
  /** key → when it expires (ms). A Map keeps insertion order: the oldest come first. */
  readonly #seen = new Map<string, number>()

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  /** `true` the first time (source, messageId) is seen within the window; `false` for a repeat. */
  claim(source: string, messageId: string, now: number): boolean {
    const key = `${source}\u001f${messageId}`
    const expires = this.#seen.get(key)
    if (expires !== undefined && expires > now) return false
    if (expires !== undefined) this.#seen.delete(key)
    this.#seen.set(key, now + this.ttlMs)
    this.#evict(now)
    return true
  }

  /** Forgets a claim whose message was not taken after all (refused with 503). */
  release(source: string, messageId: string): void {
    this.#seen.delete(`${source}\u001f${messageId}`)
  }

  get size(): number {
    return this.#seen.size
  }

  #evict(now: number): void {
    for (const [key, expires] of this.#seen) {
      if (this.#seen.size <= this.maxEntries && expires > now) break
      this.#seen.delete(key)
    }
  }
}
