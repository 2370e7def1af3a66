#!/usr/bin/env node
// `npm run mutation [-- --modules signature,parse]`: StrykerJS on the core modules
// (scripts/mutation-modules.mjs) with their unit tests (vitest.mutation.config.ts), then each
// module's score against its own threshold (Stryker's `thresholds.break` is one global figure).
// Prints a table; exits 1 when a module is below its threshold or Stryker fails. The full report:
// reports/mutation/mutation.html (and .json).
import { relative, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { readFileSync } from 'node:fs'
import { mutateTarget, selectModules } from './mutation-modules.mjs'

let modules
try {
  const { values } = parseArgs({ options: { modules: { type: 'string' } } })
  modules = selectModules(values.modules)
} catch (error) {
  console.error(`mutation: ${error.message}`)
  process.exit(2)
}

// StrykerJS runs the tests on worker threads, where setting `process.env.TZ` does not change the
// zone: the whole run gets one zone away from UTC (and not a whole number of hours from it), so
// that reading an offset-less time as local time, not UTC, is caught. Its workers inherit it.
process.env.TZ = 'Asia/Kolkata'
process.env.MUTATION_MODULES = modules.map((module) => module.name).join(',')

const { Stryker } = await import('@stryker-mutator/core')
const started = Date.now()
const results = await new Stryker({ mutate: modules.map((module) => mutateTarget(module, readFileSync(module.file, 'utf8'))) }).runMutationTest()
const seconds = Math.round((Date.now() - started) / 1000)

// Stryker's score: mutants detected (killed, or timed out) of those that ran or had no test.
const DETECTED = new Set(['Killed', 'Timeout'])
const UNDETECTED = new Set(['Survived', 'NoCoverage'])
const rows = modules.map((module) => {
  const mine = results.filter((result) => relative(process.cwd(), resolve(result.fileName)) === module.file)
  const detected = mine.filter((result) => DETECTED.has(result.status)).length
  const valid = detected + mine.filter((result) => UNDETECTED.has(result.status)).length
  const score = valid === 0 ? 0 : (100 * detected) / valid
  const timeouts = mine.filter((result) => result.status === 'Timeout').length
  // Marked `// Stryker disable` (equivalent mutants, each with its reason), or not valid code.
  const excluded = mine.length - valid
  return { module, detected, valid, score, timeouts, excluded, ok: valid > 0 && score >= module.threshold }
})

const pad = (text, width) => String(text).padEnd(width)
console.log(`\n${pad('module', 14)}${pad('scored', 8)}${pad('killed', 8)}${pad('timeout', 9)}${pad('missed', 8)}${pad('excluded', 10)}${pad('score', 10)}${pad('threshold', 11)}result`)
for (const row of rows) {
  console.log(
    pad(row.module.name, 14) + pad(row.valid, 8) + pad(row.detected - row.timeouts, 8) + pad(row.timeouts, 9) + pad(row.valid - row.detected, 8) +
      pad(row.excluded, 10) + pad(`${row.score.toFixed(2)} %`, 10) + pad(`${row.module.threshold} %`, 11) +
      (row.ok ? 'ok' : row.valid === 0 ? 'FAIL (no mutant ran)' : 'FAIL'),
  )
}
console.log(`\nmutation: ${modules.length} module(s) in ${seconds} s; report: reports/mutation/mutation.html`)
const failed = rows.filter((row) => !row.ok)
if (failed.length > 0) {
  console.error(`mutation: below threshold: ${failed.map((row) => `${row.module.name} (${row.score.toFixed(2)} % < ${row.module.threshold} %)`).join(', ')}`)
  process.exit(1)
}
