/**
 * Each platform (src/platform/platform.ts) exports everything the seam declares, with the declared
 * types: shared code imports `#platform` checked against the declarations only, so an
 * implementation that drifted would be found in its build, or not at all.
 */
import { describe, expectTypeOf, it } from 'vitest'
import type * as Seam from '../../src/platform/platform.js'
import * as browser from '../../src/platform/browser.js'
import * as server from '../../src/platform/server.js'
import * as worker from '../../src/platform/worker.js'

describe('the platform seam', () => {
  it('the server platform (Node, Bun, Deno) implements it', () => {
    expectTypeOf(server).toExtend<typeof Seam>()
  })
  it('the browser platform implements it', () => {
    expectTypeOf(browser).toExtend<typeof Seam>()
  })
  it('the worker platform implements it', () => {
    expectTypeOf(worker).toExtend<typeof Seam>()
  })
  it('would refuse a platform that leaves one out', () => {
    const { randomUUID: _left, ...missing } = browser
    expectTypeOf(missing).not.toExtend<typeof Seam>()
  })
})
