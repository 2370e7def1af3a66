#!/usr/bin/env node
/**
 * Measures comparable analytics clients exactly like `scripts/size.mjs` measures ours (esbuild,
 * browser platform, bundle + minify, min+gz of "import the client + one track"). Run by hand, not
 * in CI: it installs the peers from npm into a directory OUTSIDE the repo.
 *
 *   node scripts/size-peers.mjs [--dir /tmp/peers] [--no-install]
 *
 * Prints a Markdown table for the bundle size section of docs/performance.md. Run `npm run build` first (our row uses dist/).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ENTRY_SOURCE, kb, measure } from './size.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const dirFlag = argv.indexOf('--dir')
const dir = resolve(dirFlag === -1 ? '/tmp/peers' : argv[dirFlag + 1])
if (dir === root || dir.startsWith(root + '/')) throw new Error(`--dir must be outside the repo, got ${dir}`)

/** Each peer's documented minimal npm usage: create/load the client and send one track. */
const PEERS = [
  {
    name: 'posthog-js-lite',
    source: `import PostHog from 'posthog-js-lite'
new PostHog('k').capture('e', { userId: 'u' })`,
  },
  {
    name: '@rudderstack/analytics-js',
    source: `import { RudderAnalytics } from '@rudderstack/analytics-js'
const a = new RudderAnalytics(); a.load('k', 'https://dataplane.example'); a.track('e')`,
  },
  {
    name: '@segment/analytics-next',
    source: `import { AnalyticsBrowser } from '@segment/analytics-next'
AnalyticsBrowser.load({ writeKey: 'k' }).track('e')`,
  },
]

if (!argv.includes('--no-install')) {
  mkdirSync(dir, { recursive: true })
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"name":"peers","private":true}\n')
  execFileSync('npm', ['install', '--prefix', dir, '--no-audit', '--no-fund', ...PEERS.map((p) => `${p.name}@latest`)], { stdio: 'inherit' })
}

const rows = []
const ours = await measure(ENTRY_SOURCE, root)
const ourVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version
rows.push([`isomorphic-analytics ${ourVersion}`, ours])
for (const peer of PEERS) {
  const version = JSON.parse(readFileSync(join(dir, 'node_modules', peer.name, 'package.json'), 'utf8')).version
  // Bundled without code splitting: lazily imported chunks are counted too, as they are loaded
  // on a plain page (Segment loads its destinations/plugins this way).
  rows.push([`${peer.name} ${version}`, await measure(peer.source, dir)])
}

console.log(`Measured ${new Date().toISOString().slice(0, 10)}: esbuild (browser, bundle, minify), gzip -9.\n`)
console.log('| package | min | min+gz |')
console.log('|---|--:|--:|')
for (const [name, r] of rows) console.log(`| ${name} | ${kb(r.min)} | ${kb(r.gz)} |`)
