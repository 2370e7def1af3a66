/**
 * Builds src/webhooks/index.ts into one ESM file for scripts run in child processes, so those
 * tests exercise the current source without depending on a prior `npm run build`.
 */
import { build } from 'esbuild'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export async function bundleWebhooks(): Promise<{ dir: string; file: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-bundle-'))
  const file = join(dir, 'webhooks.js')
  await build({
    entryPoints: [fileURLToPath(new URL('../../src/webhooks/index.ts', import.meta.url))],
    outfile: file,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    // As in the published build: dependencies stay imports (cross-fetch is loaded only where a
    // runtime has no fetch).
    external: ['cross-fetch'],
    mainFields: ['module', 'main'],
    target: 'es2022',
    define: { __VERSION__: '"0.0.0-test"' },
    logLevel: 'silent',
  })
  return { dir, file }
}
