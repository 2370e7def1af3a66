#!/usr/bin/env node
/**
 * Size budget of the client entry as a user's bundler produces it: esbuild, browser platform,
 * bundle + minify of `import { Client } from 'isomorphic-analytics'` and one `track`, resolved
 * through the package's own `exports` map (package self-reference), so it measures what users get.
 *
 * Reports min and min+gz bytes, and what dominates: minified bytes per package (esbuild metafile)
 * and each dependency's marginal gzipped cost (the bundle built again with that package external).
 * Also the collector console's assets (script and stylesheet as served, scripts/console-assets.mjs),
 * against their own budget of 60 KB gzipped in all.
 * Exits 1 above a budget. Run `npm run build` first. Flags: `--json` (machine-readable output),
 * `--docs` (writes the figures into the docs pages that quote them; a test checks they are current).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'
import { buildConsoleAssets } from './console-assets.mjs'

/**
 * 12 KB: 10 KB until option `browserContext` (the page and the browser under each message's
 * context, on by default in browsers) added about 0.5 KB gzipped (10,240 → 10,737 B); 11 KB until
 * option `identity` (an anonymous id kept in localStorage or cookies, `identify()` remembered,
 * `reset()`, on by default in pages) added about 0.75 KB (11,119 → 11,886 B).
 */
export const BUDGET_GZ_BYTES = 12 * 1024
/** The collector console's assets (script + stylesheet, as served), gzipped, in all. */
export const CONSOLE_BUDGET_GZ_BYTES = 60 * 1024

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const ENTRY_SOURCE = `import { Client } from 'isomorphic-analytics'
new Client('k').track({ userId: 'u', event: 'e' })
`

/** Which package an input path of the metafile belongs to (`(own code)` outside node_modules). */
export function packageOf(path) {
  const parts = path.split('/')
  const i = parts.lastIndexOf('node_modules')
  if (i === -1) return '(own code)'
  const name = parts[i + 1]
  return name.startsWith('@') ? `${name}/${parts[i + 2]}` : name
}

/** Bundles `source` (resolved from `resolveDir`) the way a user's bundler would; returns sizes. */
export async function measure(source, resolveDir, { external = [], byFile = false, define = {} } = {}) {
  const result = await build({
    stdin: { contents: source, resolveDir, sourcefile: 'entry.js', loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    // esbuild's default target (esnext), as `esbuild --bundle --minify` gives a user; Vite's
    // default (es2023-level browsers) gives the same: private class fields are kept native.
    write: false,
    metafile: true,
    logLevel: 'silent',
    external,
    define: { 'process.env.NODE_ENV': '"production"', ...define },
  })
  const code = result.outputFiles[0].contents
  const perPackage = new Map()
  for (const output of Object.values(result.metafile.outputs)) {
    for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
      const name = byFile && packageOf(path) === '(own code)' ? path : packageOf(path)
      perPackage.set(name, (perPackage.get(name) ?? 0) + bytesInOutput)
    }
  }
  return {
    min: code.byteLength,
    gz: gzipSync(code, { level: 9 }).byteLength,
    perPackage: [...perPackage].sort((a, b) => b[1] - a[1]),
    inputs: Object.keys(result.metafile.inputs),
  }
}

export const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`

/** The console's assets as served: each one's bytes and gzipped bytes, and the gzipped total. */
async function consoleSize() {
  const assets = await buildConsoleAssets()
  const sizes = Object.fromEntries(Object.entries(assets).map(([name, text]) => [name, { min: Buffer.byteLength(text), gz: gzipSync(text, { level: 9 }).byteLength }]))
  return { sizes, gz: Object.values(sizes).reduce((n, size) => n + size.gz, 0) }
}

/** Every size the docs quote (docs/performance.md's bundle size, docs/console.md's), measured now. */
export async function docsFigures() {
  const total = await measure(ENTRY_SOURCE, root)
  const marginal = {}
  for (const [dep] of total.perPackage.filter(([name]) => name !== '(own code)')) {
    marginal[dep] = total.gz - (await measure(ENTRY_SOURCE, root, { external: [dep] })).gz
  }
  const own = total.perPackage.find(([name]) => name === '(own code)')?.[1] ?? 0
  const script = gzipSync(readFileSync(resolve(root, 'dist/isomorphic-analytics.global.js')), { level: 9 }).byteLength
  const version = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).version
  return { version, min: total.min, gz: total.gz, ownPercent: Math.round((100 * own) / total.min), marginal, script, console: (await consoleSize()).gz }
}

/** A page's text with the sizes it quotes replaced by `figures`. */
export function withFigures(page, figures) {
  return page
    .replace(/^\| isomorphic-analytics [^|]+\| [^|]+\| [^|]+\|$/m, `| isomorphic-analytics ${figures.version} | ${kb(figures.min)} | ${kb(figures.gz)} |`)
    .replace(/our own code \(\d+% of the minified/, `our own code (${figures.ownPercent}% of the minified`)
    .replace(/everything bundled\) is [\d.]+ KB gzipped/, `everything bundled) is ${kb(figures.script)} gzipped`)
    .replace(/no framework\), about\s+[\d.]+ KB\s+gzipped in all/, (text) => text.replace(/[\d.]+ KB/, kb(figures.console)))
}

async function main() {
  if (process.argv.includes('--docs')) {
    const figures = await docsFigures()
    for (const page of ['docs/performance.md', 'docs/console.md']) {
      const path = resolve(root, page)
      writeFileSync(path, withFigures(readFileSync(path, 'utf8'), figures))
    }
    console.log('docs: size figures updated')
  }
  const json = process.argv.includes('--json')
  const total = await measure(ENTRY_SOURCE, root)
  const deps = total.perPackage.map(([name]) => name).filter((name) => name !== '(own code)')
  const marginal = []
  for (const dep of deps) {
    const without = await measure(ENTRY_SOURCE, root, { external: [dep] })
    marginal.push([dep, total.gz - without.gz])
  }
  const version = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')).version
  // Our own code by source module: the same bundle built from src/ (dist/index.browser.js is one
  // file), resolved as the browser build is (`#platform` by the `browser` condition).
  const fromSource = await measure(ENTRY_SOURCE.replace("'isomorphic-analytics'", "'./src/index.ts'"), root, {
    byFile: true,
    define: { __VERSION__: JSON.stringify(version) },
  })
  const ownFiles = fromSource.perPackage.filter(([path]) => path.startsWith('src/')).slice(0, 8)
  const over = total.gz > BUDGET_GZ_BYTES
  const { sizes: consoleSizes, gz: consoleGz } = await consoleSize()
  if (json) {
    console.log(JSON.stringify({ version, console: { ...consoleSizes, gz: consoleGz, budget: CONSOLE_BUDGET_GZ_BYTES }, min: total.min, gz: total.gz, budget: BUDGET_GZ_BYTES, perPackage: Object.fromEntries(total.perPackage), ownFiles: Object.fromEntries(ownFiles), marginalGz: Object.fromEntries(marginal) }, null, 2))
  } else {
    console.log(`isomorphic-analytics@${version}: import { Client } + track, esbuild --bundle --minify --platform=browser`)
    console.log(`  min:     ${total.min} B (${kb(total.min)})`)
    console.log(`  min+gz:  ${total.gz} B (${kb(total.gz)})   budget ${kb(BUDGET_GZ_BYTES)}`)
    console.log('  minified bytes by package (metafile):')
    for (const [name, bytes] of total.perPackage) {
      console.log(`    ${name.padEnd(20)} ${String(bytes).padStart(7)} B  ${((100 * bytes) / total.min).toFixed(0).padStart(3)}%`)
    }
    console.log('  own code, largest source modules (minified bytes, bundled from src/):')
    for (const [path, bytes] of ownFiles) console.log(`    ${path.padEnd(32)} ${String(bytes).padStart(7)} B`)
    console.log('  gzipped cost of each dependency (bundle with it minus bundle without it):')
    for (const [name, bytes] of marginal) console.log(`    ${name.padEnd(20)} ${String(bytes).padStart(7)} B`)
    console.log(`collector console (GET /console), assets as served: min+gz ${consoleGz} B (${kb(consoleGz)})   budget ${kb(CONSOLE_BUDGET_GZ_BYTES)}`)
    for (const [name, size] of Object.entries(consoleSizes)) console.log(`    console.${name.padEnd(14)} min ${String(size.min).padStart(7)} B   min+gz ${String(size.gz).padStart(6)} B`)
  }
  if (over) {
    console.error(`size: ${total.gz} B min+gz is over the ${BUDGET_GZ_BYTES} B budget`)
    process.exitCode = 1
  }
  if (consoleGz > CONSOLE_BUDGET_GZ_BYTES) {
    console.error(`size: the console's assets are ${consoleGz} B min+gz, over the ${CONSOLE_BUDGET_GZ_BYTES} B budget`)
    process.exitCode = 1
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main()
