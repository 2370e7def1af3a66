/**
 * The isomorphic entries bundle for the browser with nothing Node-shaped reachable: esbuild with
 * `platform: 'browser'` refuses to resolve `node:*` and bare Node builtins (`fs`, `http`, ...), so a
 * successful bundle proves none is reachable; the metafile is also checked for builtins, and for
 * `cross-fetch`/`node-fetch` (only loaded where a runtime has no global fetch; the package's
 * `browser` field maps it to nothing, so it is never bundled for a browser).
 */
import { builtinModules } from 'node:module'
import { join } from 'node:path'
import { readFileSync } from 'node:fs'
import { build, type Metafile } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { DIST, requireBuild, ROOT } from './support/runtimes.js'

const NODE_BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]))

async function bundleForBrowser(contents: string, conditions: string[] = [], sourcefile = 'entry.js'): Promise<{ metafile: Metafile; code: string; warnings: string[] }> {
  const result = await build({
    stdin: { contents, resolveDir: ROOT, sourcefile },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions,
    write: false,
    metafile: true,
    logLevel: 'silent',
  })
  return { metafile: result.metafile, code: result.outputFiles[0].text, warnings: result.warnings.map((w) => w.text) }
}

/** What the bundle contains: `(disabled):` inputs are the package's `browser` map at work (empty). */
function reachable(metafile: Metafile): { inputs: string[]; imports: string[] } {
  const inputs = Object.keys(metafile.inputs).filter((p) => !p.startsWith('(disabled):'))
  const imports = Object.values(metafile.inputs).flatMap((i) => i.imports.map((imp) => imp.path))
  return { inputs, imports }
}

const ENTRIES = [
  ['dist/index.js (the client)', 'index.js'],
  ['dist/webhooks.js', 'webhooks.js'],
] as const

describe('browser bundles of the isomorphic entries', () => {
  it.each(ENTRIES)('%s bundles for the browser with no Node builtin and no cross-fetch', async (_label, file) => {
    requireBuild(file)
    const entry = JSON.stringify(join(DIST, file))
    const { metafile } = await bundleForBrowser(`export * from ${entry}`)
    const { inputs, imports } = reachable(metafile)
    expect(imports.filter((p) => NODE_BUILTINS.has(p) || p.startsWith('node:'))).toEqual([])
    expect(inputs.filter((p) => /node_modules\/(cross-fetch|node-fetch|whatwg-url)\//.test(p))).toEqual([])
  })

  it.each(ENTRIES)('%s has no static node: import or require in its own code', (_label, file) => {
    requireBuild(file)
    const code = readFileSync(join(DIST, file), 'utf8')
    expect(code.match(/(?:from\s*|import\s*\(\s*|require\s*\(\s*)["'](?:node:|(?:fs|path|http|https|zlib|crypto|net|tls|os|stream|url|util|events|child_process|worker_threads)["'/])/)?.[0]).toBeUndefined()
  })

  it('the package name resolves (browser conditions) to a bundle that works for `import { Client }`', async () => {
    requireBuild('index.browser.js')
    const { metafile, code } = await bundleForBrowser(`import { Client } from 'isomorphic-analytics'\nnew Client('k').track({ userId: 'u', event: 'e' })`, ['browser'])
    const { inputs, imports } = reachable(metafile)
    expect(inputs.some((p) => p.endsWith('dist/index.browser.js'))).toBe(true)
    expect(imports.filter((p) => NODE_BUILTINS.has(p) || p.startsWith('node:'))).toEqual([])
    expect(inputs.filter((p) => p.includes('cross-fetch'))).toEqual([])
    expect(code).toContain('isomorphic-analytics')
  })

  // It resolved to dist/index.cjs, the Node build: 14 KB gzipped with the Node transport, not 10.
  it('`require(\'isomorphic-analytics\')` resolves (browser conditions) to the browser build too', async () => {
    requireBuild('index.browser.cjs')
    const { metafile } = await bundleForBrowser(`const { Client } = require('isomorphic-analytics')\nnew Client('k').track({ userId: 'u', event: 'e' })`, ['browser'], 'entry.cjs')
    const { inputs } = reachable(metafile)
    expect(inputs.filter((p) => /(^|\/)dist\//.test(p))).toEqual(['dist/index.browser.cjs'])
    const code = readFileSync(join(DIST, 'index.browser.cjs'), 'utf8')
    expect(['getBuiltinModule', 'keepAlive', 'beforeExit', 'cross-fetch'].filter((s) => code.includes(s))).toEqual([])
  })

  it('the browser build leaves out the server runtimes\' paths (process exit hooks, Deno env, system error codes); the Node build keeps them', () => {
    requireBuild('index.browser.js')
    const serverOnly = ['beforeExit', 'Deno', 'UND_ERR_CONNECT_TIMEOUT', 'cross-fetch']
    const browser = readFileSync(join(DIST, 'index.browser.js'), 'utf8')
    const node = readFileSync(join(DIST, 'index.js'), 'utf8')
    expect(serverOnly.filter((s) => browser.includes(s))).toEqual([])
    expect(serverOnly.filter((s) => !node.includes(s))).toEqual([])
    expect(browser).not.toContain('__BROWSER__')
  })

  it('the Node transport (node:http keep-alive) is in the Node builds only: not in the browser build nor the <script> file', () => {
    requireBuild('index.js', 'index.cjs', 'index.browser.js', 'isomorphic-analytics.global.js')
    // Strings only src/platform/node-http.ts has: its module lookup and its keep-alive pool.
    const transportOnly = ['getBuiltinModule', 'keepAlive']
    const has = (file: string) => {
      const code = readFileSync(join(DIST, file), 'utf8')
      return transportOnly.filter((s) => code.includes(s))
    }
    expect(has('index.browser.js')).toEqual([])
    expect(has('isomorphic-analytics.global.js')).toEqual([])
    expect(has('index.js')).toEqual(transportOnly)
    expect(has('index.cjs')).toEqual(transportOnly)
  })

  // Workers and edge runtimes: their bundlers name `workerd` (wrangler), `edge-light` (Vercel) or
  // `worker`, before `browser`; the worker build has the explanations, and no page or process code.
  it.each(['workerd', 'edge-light', 'worker'])('the package name resolves (%s condition) to the worker build: web-standard, no Node, no page', async (condition) => {
    requireBuild('index.worker.js')
    const { metafile } = await bundleForBrowser(`import { Client } from 'isomorphic-analytics'\nnew Client('k').track({ userId: 'u', event: 'e' })`, [condition, 'browser'])
    const { inputs, imports } = reachable(metafile)
    expect(inputs.filter((p) => /(^|\/)dist\//.test(p))).toEqual(['dist/index.worker.js'])
    expect(imports.filter((p) => NODE_BUILTINS.has(p) || p.startsWith('node:'))).toEqual([])
    const code = readFileSync(join(DIST, 'index.worker.js'), 'utf8')
    expect(['getBuiltinModule', 'keepAlive', 'beforeExit', 'cross-fetch', 'pagehide', 'navigator.locks'].filter((s) => code.includes(s))).toEqual([])
    // The explanations the browser build leaves out for size.
    expect(['did you mean', 'next build', 'UND_ERR_CONNECT_TIMEOUT'].filter((s) => !code.includes(s))).toEqual([])
  })

  it('a Node builtin would be caught: esbuild refuses it for the browser', async () => {
    await expect(bundleForBrowser(`import { readFileSync } from 'node:fs'\nconsole.log(readFileSync)`)).rejects.toThrow(/node:fs/)
    await expect(bundleForBrowser(`import http from 'http'\nconsole.log(http)`)).rejects.toThrow(/http/)
  })

  it('the IIFE build is self-contained: no import, no require, exposes IsomorphicAnalytics', () => {
    requireBuild('isomorphic-analytics.global.js')
    const code = readFileSync(join(DIST, 'isomorphic-analytics.global.js'), 'utf8')
    expect(code.match(/(?<![.\w$])require\s*\(\s*["'][^"']*["']\)/)?.[0]).toBeUndefined()
    expect(code.match(/^\s*import[\s{*]/m)?.[0]).toBeUndefined()
    expect(code.slice(0, 60)).toMatch(/^(?:"use strict";)?var IsomorphicAnalytics=/)
  })
})
