/**
 * Group commit: items handed to `write` while a previous write is in flight wait for it, then go
 * to the server together in ONE write (one round trip, one socket write). Under load, many
 * requests share a round trip; alone, a request waits for nothing. Each caller's promise settles
 * with the write that carried its items (a failed write rejects all of its callers).
 */
export class CoalescedWrites<T> {
  #waiting: Array<{ items: readonly T[]; resolve: () => void; reject: (error: unknown) => void }> = []
  #writing = false

  constructor(private readonly writeAll: (items: T[]) => Promise<unknown>) {}

  write(items: readonly T[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ items, resolve, reject })
      if (!this.#writing) void this.#drain()
    })
  }

  async #drain(): Promise<void> {
    this.#writing = true
    while (this.#waiting.length > 0) {
      const group = this.#waiting
      this.#waiting = []
      try {
        await this.writeAll(group.flatMap((g) => g.items))
        for (const g of group) g.resolve()
      } catch (error) {
        for (const g of group) g.reject(error)
      }
    }
    this.#writing = false
  }
}
