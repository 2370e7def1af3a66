import { readFileSync } from 'node:fs'
import { defineConfig, type Options } from 'tsup'
import { consoleAssetsEsbuild } from './scripts/console-assets.mjs'

const { version } = JSON.parse(readFileSync('./package.json', 'utf8')) as { version: string }
const define = { __VERSION__: JSON.stringify(version) }

const entry: Record<string, string> = {
  index: 'src/index.ts',
  webhooks: 'src/webhooks/index.ts',
  collector: 'src/collector/index.ts',
  testing: 'src/testing/index.ts',
  cli: 'src/cli/index.ts',
  // Loaded by the collector on the first console request (src/collector/console/assets.ts).
  'console-assets': 'src/collector/console/assets.ts',
}

/**
 * `import('./assets.js')` in src/collector/console/page.ts stays a dynamic import of the built
 * entry beside it (`dist/console-assets.js`, ESM, which the CommonJS build imports too), so a
 * user's bundler makes it a chunk of its own, loaded only when the console is.
 */
const consoleAssetsApart: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'console-assets-apart',
  setup(build) {
    build.onResolve({ filter: /^\.\/assets\.js$/ }, (args) =>
      args.importer.endsWith('src/collector/console/page.ts') ? { path: './console-assets.js', external: true } : undefined)
  },
}

/**
 * In the collector's build, src/platform/node-http.ts (the Node transport behind `nodeFetch` and
 * the default webhook transport on Node) is an entry of its own, `dist/node-http.js` (`.cjs` in
 * the CommonJS build, so both imports below load one module): server.ts imports it statically
 * (for `nodeFetch`), transport.ts dynamically, on Node only. A worker's bundler then leaves it
 * out (an unused import; a chunk of its own), about 4 KB of the worker's entry. The other entries
 * keep it inside (bundle.test.ts checks the client's Node builds carry it).
 */
const nodeHttpApart: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'node-http-apart',
  setup(build) {
    // tsup runs esbuild in ESM for both formats (rollup then writes the CommonJS), so the format
    // is told by the output extension it asks for.
    const path = `./node-http${build.initialOptions.outExtension?.['.js'] ?? '.js'}`
    build.onResolve({ filter: /(?:^\.|\/platform)\/node-http\.js$/ }, (args) =>
      /src\/(?:platform\/transport|collector\/server\/server)\.ts$/.test(args.importer) ? { path, external: true } : undefined)
  },
}

const { collector: collectorEntry, ...entryButCollector } = entry

const shared: Options = {
  entry: entryButCollector,
  define,
  target: 'es2022',
  // No source maps: the package would carry 2.2 MB of them (sources included) for a 0.8 MB build,
  // and a `sourceMappingURL` must not point at a file the package does not have. The builds are
  // unminified ESM/CJS, readable as they are.
  sourcemap: false,
  splitting: false,
  treeshake: true,
  // The collector embeds the console's built assets (src/console/): `virtual:console-assets`, in
  // an entry of their own that the collector imports when it serves them.
  esbuildPlugins: [consoleAssetsEsbuild, consoleAssetsApart],
}

export default defineConfig([
  // ESM: dependencies stay external, so a user's bundler dedupes them. The declaration files of
  // every entry, the collector's included, are built here together (they share chunks).
  { ...shared, format: ['esm'], dts: { entry }, clean: true },
  // CommonJS: dependencies stay external too (every one of them can be required).
  { ...shared, format: ['cjs'], dts: { entry } },
  // The collector (ESM and CommonJS), with the Node transport beside it (nodeHttpApart) and
  // durable mode in a file of its own: `import('./durable.js')` in create-collector.ts, loaded
  // only with a `queue`, becomes `dist/durable-<hash>.js` (`.cjs`), which a worker's bundler
  // leaves in a chunk never loaded, about 30 KB of the worker's entry. Code splitting, not an
  // entry apart (as console-assets is): durable mode shares the collector's modules (its errors,
  // checked with `instanceof`, the queue's seam, the exact JSON parser loaded once), and an entry
  // would carry copies of them; split, both import one `dist/chunk-<hash>.js`. The CommonJS build
  // (tsup's splitting for it) `require`s its chunks and loads durable mode with `import()`.
  {
    ...shared,
    entry: { collector: collectorEntry, 'node-http': 'src/platform/node-http.ts' },
    format: ['esm', 'cjs'],
    splitting: true,
    esbuildPlugins: [...shared.esbuildPlugins!, nodeHttpApart],
  },
  // The client for browser bundlers (the `browser` export condition, for `import` and `require`),
  // and for workers and edge runtimes (`workerd`, `edge-light`, `worker`, and the default of any
  // runtime that names neither `node` nor `browser`): the same entry, whose `#platform` (see
  // src/platform/platform.ts) resolves by the build's conditions to src/platform/browser.ts
  // (esbuild's browser platform) or src/platform/worker.ts (the `worker` condition, on the
  // neutral platform, which adds no `browser` of its own).
  {
    entry: { 'index.browser': 'src/index.ts' },
    define,
    format: ['esm', 'cjs'],
    platform: 'browser',
    target: 'es2022',
    sourcemap: false,
    splitting: false,
    treeshake: true,
  },
  {
    entry: { 'index.worker': 'src/index.ts' },
    define,
    format: ['esm', 'cjs'],
    platform: 'neutral',
    esbuildOptions: (options) => {
      options.conditions = ['worker']
    },
    target: 'es2022',
    sourcemap: false,
    splitting: false,
    treeshake: true,
  },
  // One <script> file exposing globalThis.IsomorphicAnalytics.
  {
    entry: { 'isomorphic-analytics': 'src/index.ts' },
    define,
    format: ['iife'],
    globalName: 'IsomorphicAnalytics',
    platform: 'browser',
    target: 'es2020',
    minify: true,
    sourcemap: false,
    noExternal: [/.*/],
    outExtension: () => ({ js: '.global.js' }),
  },
])
