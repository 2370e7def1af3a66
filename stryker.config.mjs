// StrykerJS, run by `npm run mutation` (scripts/mutation.mjs, which checks each module's score
// against its own threshold and may narrow `mutate`). See docs/contributing.md.
import { MODULES } from './scripts/mutation-modules.mjs'

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: MODULES.map((module) => module.file),
  // Two workers: the machines this runs on have two cores.
  concurrency: 2,
  // A mutant that runs past its tests' own time (×1.5) plus this is counted as killed: a loop made
  // endless. Generous, so that a loaded machine's slowness is not counted as a kill; endless loops
  // in the modules' loops are caught sooner, by Stryker's hit limit.
  timeoutMS: 10_000,
  timeoutFactor: 1.5,
  reporters: ['progress', 'clear-text', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
  tempDirName: '.stryker-tmp',
  // What the tests under mutation never read: not copied into the sandbox.
  ignorePatterns: ['dist', '.runtimes', '.tmp', 'bench', 'examples', 'docs', 'reports', 'coverage'],
  // Per-module thresholds are checked by scripts/mutation.mjs; Stryker's own `break` is global.
  thresholds: { high: 90, low: 85, break: null },
}
