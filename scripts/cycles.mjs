#!/usr/bin/env node
/**
 * Import cycles through the platform seam: dpdm (npm run cycles) checks every import of src/,
 * types included, but takes `#platform` (package.json `imports`) for a package. This builds each
 * entry as each platform resolves it (server, browser, worker: src/platform/platform.ts) with
 * esbuild, and looks for a cycle in the import graph of src/ that the build walked. Exits 1 on one.
 */
import { build } from 'esbuild'
import { consoleAssetsEsbuild } from './console-assets.mjs'

const entries = ['src/index.ts', 'src/webhooks/index.ts', 'src/collector/index.ts', 'src/testing/index.ts', 'src/cli/index.ts']
const platforms = [
  { name: 'server', platform: 'node' },
  { name: 'browser', platform: 'browser', entries: ['src/index.ts'] },
  { name: 'worker', platform: 'neutral', conditions: ['worker'], entries: ['src/index.ts'] },
]

let found = 0
for (const { name, platform, conditions, entries: only } of platforms) {
  const result = await build({
    entryPoints: only ?? entries, bundle: true, write: false, metafile: true, outdir: 'out', platform, format: 'esm',
    splitting: true, packages: 'external', logLevel: 'silent', plugins: [consoleAssetsEsbuild],
    define: { __VERSION__: '"0"' }, ...(conditions && { conditions }),
  })
  const graph = new Map(Object.entries(result.metafile.inputs).map(([file, { imports }]) =>
    [file, imports.filter((i) => !i.external && i.path.startsWith('src/')).map((i) => i.path)]))
  // Depth-first, with the files on the current path: a file met again on it closes a cycle.
  const done = new Set()
  const onPath = []
  const visit = (file) => {
    if (done.has(file)) return
    const at = onPath.indexOf(file)
    if (at >= 0) {
      found++
      console.error(`cycle (${name}): ${[...onPath.slice(at), file].join(' -> ')}`)
      return
    }
    onPath.push(file)
    for (const next of graph.get(file) ?? []) visit(next)
    onPath.pop()
    done.add(file)
  }
  for (const file of graph.keys()) visit(file)
  console.log(`${name}: ${graph.size} modules, ${found ? 'cycles found' : 'no cycle'}`)
}
process.exit(found ? 1 : 0)
