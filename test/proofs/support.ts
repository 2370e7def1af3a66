/**
 * What the property tests and fuzzers share: the fast-check settings. In `npm test`: a fixed seed,
 * a bounded number of runs and a time budget (a property that runs out of it passes with the runs
 * it made). By hand: `FUZZ_RUNS` (more runs, no time budget) and `FUZZ_SEED` (another seed), see
 * docs/contributing.md.
 */
import type { Parameters as FcParameters } from 'fast-check'

const RUNS = Number(process.env.FUZZ_RUNS)
const SEED = Number(process.env.FUZZ_SEED)
/** Runs asked for by hand. */
const byHand = Number.isInteger(RUNS) && RUNS > 0

/** fast-check's parameters: `FUZZ_SEED` or a fixed seed (a failure replays as reported); `FUZZ_RUNS` or `runs`. */
export function fcParameters<T>(runs: number, budgetMs = 30_000): FcParameters<T> {
  return {
    seed: Number.isInteger(SEED) ? SEED : 450_045,
    numRuns: byHand ? RUNS : runs,
    ...(!byHand && { interruptAfterTimeLimit: budgetMs, markInterruptAsFailure: false }),
  }
}

/** The vitest timeout of a property's test: its budget and some, or a day when run by hand. */
export const fuzzTimeout = (budgetMs = 30_000): number => (byHand ? 86_400_000 : budgetMs * 2)
