// The unit tests of the modules under mutation testing (scripts/mutation-modules.mjs), for
// StrykerJS (stryker.config.mjs). `MUTATION_MODULES` (set by scripts/mutation.mjs) narrows them to
// the modules being checked.
import { defineConfig } from 'vitest/config'
import base from './vitest.config.js'
import { selectModules } from './scripts/mutation-modules.mjs'

const tests = [...new Set(selectModules(process.env.MUTATION_MODULES).flatMap((module) => module.tests))]

export default defineConfig({
  ...base,
  test: { ...base.test, include: tests, typecheck: { enabled: false } },
})
