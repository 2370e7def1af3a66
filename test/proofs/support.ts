/**
 * What the property tests and fuzzers share: the fast-check settings (a fixed seed and a bounded
 * number of runs in `npm test`; `FUZZ_RUNS` and `FUZZ_SEED` for a longer or another run by hand,
 * see docs/contributing.md).
 */
import type { Parameters as FcParameters } from 'fast-check'

/** The runs of each property: `FUZZ_RUNS`, else `fallback` (sized to keep each file well under 20 s). */
export function fuzzRuns(fallback: number): number {
  const runs = Number(process.env.FUZZ_RUNS)
  return Number.isInteger(runs) && runs > 0 ? runs : fallback
}

/** fast-check's parameters: `FUZZ_SEED` or a fixed seed (so a failure is replayed as reported), and `runs`. */
export function fcParameters<T>(fallbackRuns: number): FcParameters<T> {
  const seed = Number(process.env.FUZZ_SEED)
  return { seed: Number.isInteger(seed) ? seed : 45_0045, numRuns: fuzzRuns(fallbackRuns), interruptAfterTimeLimit: 60_000, markInterruptAsFailure: false }
}
