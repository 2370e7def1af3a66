/**
 * A user's first hour, from the packed tarball: a browser app that imports the client and the
 * webhooks entry, and a worker that serves the collector's fetch handler, build with webpack 5,
 * Vite and esbuild with no warning and no Node built-in requested; and a TypeScript project that imports every entry type-checks under node16 (ESM and
 * CommonJS), nodenext, bundler, node10 and a workers-style config (`lib: ["es2022", "dom"]`,
 * `types: []`: no Node types). `skipLibCheck` is off, so our declaration files are checked too.
 */
import { createRequire } from 'node:module'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { installPacked, requireBuild, ROOT, run, scratchDir } from './support/runtimes.js'

let scratch: ReturnType<typeof scratchDir>

/** What a browser app does: the client and the webhooks helpers, nothing else. */
const BROWSER_APP = `import { Client } from 'isomorphic-analytics'
import { verifySignature } from 'isomorphic-analytics/webhooks'

const client = new Client('YOUR_WRITE_KEY', { endpoint: 'https://collector.example.com' })
client.track({ anonymousId: 'a-1', event: 'Page Loaded', properties: { n: 10n } })
export { client, verifySignature }
`

/** What a worker or edge function does: the collector's fetch handler (its Node server is never reached). */
const WORKER_APP = `import { createCollector } from 'isomorphic-analytics/collector'

const collector = createCollector({ sources: [{ name: 'web', writeKey: 'k', webhooks: { urls: [{ url: 'https://hooks.example.com/a' }] } }] })
export default { fetch: (request) => collector.fetch(request) }
`

/** Uses each entry the way its README section does, with the types users write. */
const CONSUMER = `import { Client, isHttpError, type Properties } from 'isomorphic-analytics'
import { WebhookDestination, verifySignature } from 'isomorphic-analytics/webhooks'
import { createCollector, type Collector } from 'isomorphic-analytics/collector'

const properties: Properties = { total: 42.5, big: 10n, at: new Date(0), tags: ['a'], nested: { ok: true } }
const client = new Client('YOUR_WRITE_KEY', { endpoint: 'https://collector.example.com' })
client.track({ userId: 'u', event: 'Order Completed', properties })
client.on('error', (error) => { if (isHttpError(error)) console.log(error.status) })
const collector: Collector = createCollector({ sources: [{ name: 'web', writeKey: 'k' }] })
const handler: (request: Request) => Promise<Response> = collector.fetch
export { client, handler, WebhookDestination, verifySignature }
`

/** The testing entry adds msw, whose types need the DOM lib. */
const TESTING_CONSUMER = `import { createFakeCollector } from 'isomorphic-analytics/testing'
const fake = createFakeCollector({ writeKey: 'k' })
export const handlers = fake.handlers
`

/** Each config: compiler options, and which consumer files it checks (the extension picks ESM or CJS). */
const TS_CONFIGS: Record<string, { options: Record<string, unknown>; files: string[] }> = {
  'node16-esm': { options: { module: 'node16', moduleResolution: 'node16', types: ['node'] }, files: ['consumer.mts', 'testing.mts'] },
  'node16-cjs': { options: { module: 'node16', moduleResolution: 'node16', types: ['node'] }, files: ['consumer.cts', 'testing.cts'] },
  nodenext: { options: { module: 'nodenext', moduleResolution: 'nodenext', types: ['node'] }, files: ['consumer.mts', 'testing.cts'] },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler', types: ['node'] }, files: ['consumer.ts', 'testing.ts'] },
  node10: { options: { module: 'commonjs', moduleResolution: 'node10', types: ['node'] }, files: ['consumer.ts', 'testing.ts'] },
  // A Cloudflare-style worker: web globals only, no Node types at all.
  workers: { options: { module: 'esnext', moduleResolution: 'bundler', types: [] }, files: ['consumer.ts', 'testing.ts'] },
}

beforeAll(() => {
  requireBuild('index.js', 'webhooks.js', 'collector.d.ts', 'testing.d.ts')
  scratch = scratchDir('packed-app')
  installPacked(scratch.dir)
  writeFileSync(join(scratch.dir, 'package.json'), '{ "name": "first-hour-app", "private": true }\n')
  mkdirSync(join(scratch.dir, 'src'))
  writeFileSync(join(scratch.dir, 'src/main.js'), BROWSER_APP)
  writeFileSync(join(scratch.dir, 'src/worker.js'), WORKER_APP)
  for (const ext of ['ts', 'mts', 'cts']) {
    writeFileSync(join(scratch.dir, `consumer.${ext}`), CONSUMER)
    writeFileSync(join(scratch.dir, `testing.${ext}`), TESTING_CONSUMER)
  }
  for (const [name, { options, files }] of Object.entries(TS_CONFIGS)) {
    const compilerOptions = { target: 'es2022', lib: ['es2022', 'dom'], strict: true, noEmit: true, skipLibCheck: false, ...options }
    writeFileSync(join(scratch.dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files }, null, 2))
  }
}, 120_000)

afterAll(() => scratch?.remove())

const requireFromRoot = createRequire(join(ROOT, 'package.json'))

/**
 * The worker bundle's size budget, bytes (webpack's own hint is at 250,000): 272 KiB. It was
 * 296 KiB while durable mode (BullMQ's queue, the shared counters, the bus, shared settings and
 * memberships) was imported statically, taking the worker to 288,429 bytes. It is now loaded with
 * one `import()` only when a `queue` is configured, a chunk of its own the worker never loads
 * (about 30 KB): the worker was 264,645 bytes (budget 260 KiB), then replay and endpoint health
 * (the admin endpoints, the kept payloads, the per-URL records and their console views) took it
 * to 276,210.
 */
const WORKER_BUDGET = 278_528

describe('a browser app and a worker built from the packed package', () => {
  // webpack's only allowed warning is its performance hint on the worker (assets over 244 KiB):
  // the worker serving the collector is about 265 KB, over a third of it ajv for tracking plans (see
  // docs/runtimes.md). Held to WORKER_BUDGET instead; the app has no warning at all.
  it('webpack 5 (target web, production): no error, no Node built-in, no warning but the worker\'s size hint, within its budget', async () => {
    const webpack = requireFromRoot('webpack') as typeof import('webpack')
    const stats = await new Promise<import('webpack').Stats>((resolve, reject) =>
      webpack({ mode: 'production', target: 'web', context: scratch.dir, entry: { main: './src/main.js', worker: './src/worker.js' }, output: { path: join(scratch.dir, 'out-webpack') } }, (error, result) =>
        error ? reject(error) : resolve(result!)),
    )
    const info = stats.toJson({ all: false, warnings: true, errors: true, modules: true, assets: true, chunks: true, chunkModules: true })
    expect(info.errors?.map((e) => e.message)).toEqual([])
    const sizeHint = (message: string) => /^(asset|entrypoint) size limit: [\s\S]*\bworker\b/.test(message) && !/\bmain\.js\b/.test(message)
    expect(info.warnings?.map((w) => w.message).filter((message) => !sizeHint(message) && !/^webpack performance recommendations/.test(message))).toEqual([])
    const worker = info.assets?.find((asset) => asset.name === 'worker.js')
    expect(worker?.size).toBeLessThan(WORKER_BUDGET)
    // Durable mode is in a chunk of its own (loaded on demand, never by this worker), not in its entry.
    const durable = (info.chunks ?? []).filter((c) => c.modules?.some((m) => /isomorphic-analytics\/dist\/durable-\w+\.js/.test(m.name ?? '')))
    expect(durable.map((c) => ({ initial: c.initial, files: c.files }))).toEqual([{ initial: false, files: [expect.not.stringMatching(/^worker\.js$/)] }])
    expect((info.modules ?? []).map((m) => m.name ?? '').filter((name) => /node:|cross-fetch\/dist\/node|node-fetch/.test(name))).toEqual([])
  }, 60_000)

  it('Vite: no warning (a Node built-in would be "externalized for browser compatibility")', async () => {
    const { build } = await import('vite')
    const warnings: string[] = []
    const note = (message: string) => void warnings.push(message)
    await build({
      root: scratch.dir,
      configFile: false,
      logLevel: 'warn',
      customLogger: { info() {}, warn: note, warnOnce: note, error: note, clearScreen() {}, hasErrorLogged: () => false, hasWarned: false },
      build: { outDir: join(scratch.dir, 'out-vite'), rollupOptions: { input: [join(scratch.dir, 'src/main.js'), join(scratch.dir, 'src/worker.js')], onwarn: (warning) => note(warning.message) } },
    })
    expect(warnings).toEqual([])
  }, 60_000)

  it('esbuild (--platform=browser): no warning, no Node built-in, no cross-fetch', async () => {
    const { build } = await import('esbuild')
    const result = await build({ entryPoints: [join(scratch.dir, 'src/main.js'), join(scratch.dir, 'src/worker.js')], outdir: join(scratch.dir, 'out-esbuild'), bundle: true, platform: 'browser', format: 'esm', minify: true, write: false, metafile: true, logLevel: 'silent' })
    expect(result.warnings.map((w) => w.text)).toEqual([])
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.filter((p) => !p.startsWith('(disabled):') && /cross-fetch|node-fetch/.test(p))).toEqual([])
  })
})

// One after another: in parallel, six tsc runs only fight over the machine's cores.
describe('a TypeScript project using every entry of the packed package', () => {
  it.each(Object.keys(TS_CONFIGS))('type-checks under %s', async (name) => {
    const result = await run(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${name}.json`], { cwd: scratch.dir, timeoutMs: 120_000 })
    const errors = (result.stdout + result.stderr).split('\n').filter(Boolean)
    // Under node16 CommonJS, msw's own declarations import an ESM-only package (TS1479); that is
    // msw's, not ours (the README says to use nodenext or skipLibCheck there). Nothing else may fail.
    const ours = name === 'node16-cjs' ? errors.filter((line) => !/node_modules\/msw\/.*TS1479/.test(line)) : errors
    expect(ours).toEqual([])
    if (ours.length === errors.length) expect(result.code).toBe(0)
  }, 150_000)
})
