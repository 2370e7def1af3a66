/**
 * The late outcomes a process still owes: URLs still answering when another URL of their attempt
 * delivered the message (`pending` in its results), whose outcome its `TraceSink` reports later
 * (`late`). Their requests run past the attempt and the job, so a closing process waits for them
 * within its drain timeout (`idle`) before its bus stops: otherwise a late answer that came after
 * that reached only this process's console record, never the other processes'.
 */
import type { UrlResult } from '../../webhooks/index.js'

export class LateOutcomes {
  /** Late outcomes expected and not reported yet. */
  #owed = 0
  #idle: Array<() => void> = []

  /**
   * For one attempt: its `onLate` (reports each late outcome with `report`) and `settled`, to call
   * with the attempt's results (each `pending` URL is owed until its outcome comes; one that came
   * before the results were read is not).
   */
  follow(report: (result: UrlResult) => void): { onLate(index: number, result: UrlResult): void; settled(results: readonly UrlResult[]): void } {
    const heard = new Set<number>()
    let owed: Set<number> | undefined
    return {
      onLate: (index, result) => {
        report(result)
        if (owed?.delete(index)) this.#paid()
        else heard.add(index)
      },
      settled: (results) => {
        owed = new Set(results.flatMap((r, i) => (r.pending && !heard.has(i) ? [i] : [])))
        this.#owed += owed.size
      },
    }
  }

  /** Resolves once no late outcome is owed. */
  idle(): Promise<void> {
    if (this.#owed === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  #paid(): void {
    if (--this.#owed > 0) return
    for (const resolve of this.#idle.splice(0)) resolve()
  }
}
