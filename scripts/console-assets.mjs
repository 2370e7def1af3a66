/**
 * The console's assets (src/console/): its script bundled and minified by esbuild for browsers,
 * and its stylesheet. The build embeds them in the collector as the module `virtual:console-assets`
 * (so `collector.fetch` serves them on every runtime, with no file access); vitest resolves the
 * same module with the same function, and `npm run size` measures what it returns.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const CONSOLE_MODULE = 'virtual:console-assets'

/** `{ js, css }`: the console's script and stylesheet, as served. */
export async function buildConsoleAssets() {
  const result = await build({
    entryPoints: [resolve(root, 'src/console/main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    logLevel: 'silent',
  })
  const css = await build({
    entryPoints: [resolve(root, 'src/console/console.css')],
    bundle: true,
    minify: true,
    write: false,
    logLevel: 'silent',
  })
  return { js: result.outputFiles[0].text, css: css.outputFiles[0].text }
}

/**
 * The module embeds each asset gzipped (base64): a collector bundle (a worker serving it) carries
 * 8 KB instead of 15, and the page serves the bytes as they are to browsers, which all accept gzip.
 */
const moduleSource = async () => {
  const { js, css } = await buildConsoleAssets()
  const packed = (text) => gzipSync(text, { level: 9 }).toString('base64')
  return `export default ${JSON.stringify({ js: packed(js), css: packed(css) })}`
}

/** esbuild (tsup) plugin: `import assets from 'virtual:console-assets'`. */
export const consoleAssetsEsbuild = {
  name: 'console-assets',
  setup(b) {
    b.onResolve({ filter: /^virtual:console-assets$/ }, () => ({ path: CONSOLE_MODULE, namespace: 'console-assets' }))
    b.onLoad({ filter: /.*/, namespace: 'console-assets' }, async () => ({
      contents: await moduleSource(),
      loader: 'js',
      watchFiles: [resolve(root, 'src/console')],
    }))
  },
}

/** Vite (vitest) plugin for the same module. */
export const consoleAssetsVite = {
  name: 'console-assets',
  resolveId: (id) => (id === CONSOLE_MODULE ? `\0${CONSOLE_MODULE}` : undefined),
  load: (id) => (id === `\0${CONSOLE_MODULE}` ? moduleSource() : undefined),
}
