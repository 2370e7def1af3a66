/**
 * Bun and Deno (binaries from the `bun` and `deno` npm packages): a script imports the packed
 * package by name (and Deno also `dist/index.js` by path), sends real events to a loopback sink,
 * and exits on its own: the flush timer does not keep the runtime alive, and a script that never
 * calls `flush()` still delivers before exiting (Bun: `beforeExit`; Deno: Node-compat `beforeExit`).
 * Deno runs with `--allow-net=127.0.0.1 --allow-read`, with and without `--allow-env`; without it,
 * the client must not show Deno's interactive permission prompt (checked on a pseudo-terminal).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSink, UUID_V4, type Sink } from './support/sink.js'
import { esmScript, expectScriptDelivered, printedFlush, printedIds, printedResolution } from './support/scripts.js'
import { DIST, expectCleanExit, installPacked, requireBinary, requireBuild, run, scratchDir, writeFiles, type RunResult } from './support/runtimes.js'

let sink: Sink
let scratch: ReturnType<typeof scratchDir>

beforeAll(async () => {
  requireBuild('index.js')
  sink = await startSink()
  scratch = scratchDir('bun-deno')
  installPacked(scratch.dir)
  writeFiles(scratch.dir, {
    'by-name.mjs': esmScript('isomorphic-analytics'),
    'by-path.mjs': esmScript(pathToFileURL(join(DIST, 'index.js')).href),
  })
}, 120_000)

afterAll(async () => {
  await sink?.close()
  scratch?.remove()
})

async function expectDelivered(result: RunResult, tag: string, mode: string, script = 'by-name.mjs'): Promise<void> {
  expectCleanExit(result, tag)
  // by name: the packed copy (through its exports map), not the repo's own dist via self-reference.
  const packed = join(scratch.dir, 'node_modules/isomorphic-analytics/dist/index.js')
  expect(printedResolution(result)).toBe(script === 'by-name.mjs' ? packed : join(DIST, 'index.js'))
  expectScriptDelivered(result, sink, tag, mode)
}

describe('Bun', () => {
  it.each(['flush', 'exit'])('imports the package by name, delivers (%s) and exits on its own', async (mode) => {
    const bun = requireBinary('bun')
    const tag = `bun-${mode}`
    const result = await run(bun, ['by-name.mjs', sink.url, mode, tag], { cwd: scratch.dir, timeoutMs: 30_000 })
    await expectDelivered(result, tag, mode)
  }, 60_000)

  it('logs with DEBUG=analytics', async () => {
    const bun = requireBinary('bun')
    const result = await run(bun, ['by-name.mjs', sink.url, 'flush', 'bun-debug'], { cwd: scratch.dir, env: { DEBUG: 'analytics' }, timeoutMs: 30_000 })
    await expectDelivered(result, 'bun-debug', 'flush')
    expect(result.stderr).toMatch(/^analytics:client enqueued track /m)
    expect(result.stderr).toMatch(/^analytics:client delivered 3 messages \(200\)/m)
  }, 60_000)
})

describe('Deno', () => {
  const base = ['run', '--allow-net=127.0.0.1', '--allow-read']
  const cases = [
    ['by name, --allow-env, flush()', 'by-name.mjs', true, 'flush'],
    ['by name, --allow-env, no flush (exit hook)', 'by-name.mjs', true, 'exit'],
    ['by name, no --allow-env, flush()', 'by-name.mjs', false, 'flush'],
    ['by name, no --allow-env, no flush (exit hook)', 'by-name.mjs', false, 'exit'],
    ['dist/index.js by path, flush()', 'by-path.mjs', true, 'flush'],
  ] as const

  it.each(cases)('%s: delivers and exits on its own', async (_name, script, allowEnv, mode) => {
    const deno = requireBinary('deno')
    const tag = `deno-${script}-${allowEnv ? 'env' : 'noenv'}-${mode}`
    const flags = allowEnv ? [...base, '--allow-env'] : [...base, '--no-prompt']
    const result = await run(deno, [...flags, script, sink.url, mode, tag], { cwd: scratch.dir, timeoutMs: 30_000 })
    await expectDelivered(result, tag, mode, script)
  }, 60_000)

  it('logs with DEBUG=analytics and --allow-env', async () => {
    const deno = requireBinary('deno')
    const result = await run(deno, [...base, '--allow-env', 'by-name.mjs', sink.url, 'flush', 'deno-debug'], { cwd: scratch.dir, env: { DEBUG: 'analytics' }, timeoutMs: 30_000 })
    await expectDelivered(result, 'deno-debug', 'flush')
    expect(result.stderr).toMatch(/^analytics:client enqueued track /m)
  }, 60_000)

  it('never shows the interactive env permission prompt without --allow-env (pseudo-terminal)', async () => {
    const deno = requireBinary('deno')
    // `script` (util-linux) gives Deno a terminal, where it would prompt (and wait) for env access.
    if (!existsSync('/usr/bin/script')) throw new Error('/usr/bin/script (util-linux) is required for this test')
    const command = [deno, ...base, 'by-name.mjs', sink.url, 'flush', 'deno-tty'].map((a) => `'${a}'`).join(' ')
    const result = await run('/usr/bin/script', ['-qec', command, '/dev/null'], { cwd: scratch.dir, env: { DEBUG: 'analytics' }, timeoutMs: 30_000 })
    expect(result.stdout).not.toContain('Deno requests')
    await expectDelivered(result, 'deno-tty', 'flush')
    // DEBUG is set, but unreadable without permission: logging stays off.
    expect(result.stdout).not.toMatch(/^analytics:client /m)
  }, 60_000)
})
