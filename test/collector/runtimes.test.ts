/**
 * `createCollector(...).fetch` runs unchanged on Bun, Deno and workerd (Cloudflare Workers,
 * without nodejs_compat): the collector entry bundled the way a worker build does it (esbuild,
 * browser platform), then the same requests answered the same way in each runtime.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consoleAssetsEsbuild } from '../../scripts/console-assets.mjs'

const ROOT = resolve(__dirname, '../..')
const BIN = (name: string) => join(ROOT, 'node_modules/.bin', name)

/** Three requests: a gzip batch (200), an invalid message (400), an unknown key (401). */
const EXERCISE = `
import { createCollector } from ${JSON.stringify(join(ROOT, 'src/collector/index.ts'))}
export const collector = createCollector({ sources: [{ writeKey: 'K', name: 'web' }] })
export async function exercise(gzipBase64) {
  const gzip = Uint8Array.from(atob(gzipBase64), (c) => c.charCodeAt(0))
  const auth = (key) => ({ authorization: 'Basic ' + btoa(key + ':'), 'content-type': 'application/json' })
  const answers = []
  for (const [key, body, extra] of [
    ['K', gzip, { 'content-encoding': 'gzip' }],
    ['K', '{"batch":[{"type":"track","userId":"u"}]}', {}],
    ['nope', '{"batch":[]}', {}],
  ]) {
    const response = await collector.fetch(new Request('http://c/v1/batch', { method: 'POST', headers: { ...auth(key), ...extra }, body }))
    answers.push([response.status, await response.json()])
  }
  return { answers, stats: collector.stats() }
}
`
const GZIP = gzipSync(JSON.stringify({ batch: [{ type: 'identify', userId: 'u1' }] })).toString('base64')
const EXPECTED = [
  [200, { success: true }],
  [400, { success: false, error: { code: 'VALIDATION', message: "You must pass 'event'.", field: 'batch[0].event' } }],
  [401, { success: false, error: { code: 'UNAUTHORIZED', message: 'Unknown write key.' } }],
]

let dir: string
let bundle: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'collector-runtimes-'))
  const result = await build({
    stdin: {
      contents: `${EXERCISE}\nexport default { async fetch(request) { return Response.json(await exercise(new URL(request.url).searchParams.get('gzip'))) } }`,
      resolveDir: ROOT,
      sourcefile: 'entry.js',
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    define: { __VERSION__: '"0.0.0-test"' },
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    plugins: [consoleAssetsEsbuild],
  })
  bundle = result.outputFiles[0].text
  writeFileSync(join(dir, 'collector.mjs'), bundle)
  writeFileSync(join(dir, 'main.mjs'), `import { exercise } from './collector.mjs'\nconsole.log(JSON.stringify(await exercise(${JSON.stringify(GZIP)})))\n`)
}, 60_000)

afterAll(() => rmSync(dir, { recursive: true, force: true }))

function expectExercise(output: { answers: unknown; stats: Record<string, number> }) {
  expect(output.answers).toEqual(EXPECTED)
  expect(output.stats).toMatchObject({ requests: 3, received: 1, rejected: 2 })
}

describe('the collector handler in other runtimes', () => {
  it('has no node: import in a worker bundle', () => {
    expect(bundle).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/)
  })

  it.each<[string, (main: string) => string[]]>([
    ['bun', (main) => [BIN('bun'), main]],
    ['deno', (main) => [BIN('deno'), 'run', '--quiet', main]],
  ])('answers the same on %s', (_, command) => {
    const [binary, ...args] = command(join(dir, 'main.mjs'))
    const run = spawnSync(binary, args, { encoding: 'utf8', timeout: 60_000 })
    expect(run.status, run.stderr).toBe(0)
    expectExercise(JSON.parse(run.stdout.trim().split('\n').pop()!))
  }, 60_000)

  it('answers the same on workerd (no nodejs_compat)', async () => {
    writeFileSync(join(dir, 'worker.js'), bundle)
    writeFileSync(join(dir, 'config.capnp'), `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2025-06-01",
);
`)
    const child = spawn(BIN('workerd'), ['serve', 'config.capnp', '--socket-addr', 'http=127.0.0.1:0', '--control-fd', '3'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    })
    let log = ''
    child.stdout!.on('data', (c: Buffer) => (log += c))
    child.stderr!.on('data', (c: Buffer) => (log += c))
    try {
      const port = await new Promise<number>((resolvePort, reject) => {
        let control = ''
        ;(child.stdio[3] as Readable).on('data', (c: Buffer) => {
          control += c.toString()
          const listen = control.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((e) => e.event === 'listen')
          if (listen) resolvePort(listen.port)
        })
        child.on('exit', (code) => reject(new Error(`workerd exited (${code}): ${log}`)))
      })
      const response = await fetch(`http://127.0.0.1:${port}/?gzip=${encodeURIComponent(GZIP)}`)
      expect(response.status, log).toBe(200)
      expectExercise((await response.json()) as never)
    } finally {
      child.kill('SIGKILL')
    }
  }, 60_000)
})
