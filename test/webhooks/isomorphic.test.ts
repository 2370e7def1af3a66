/** The webhooks entry uses web-standard globals only: it bundles for the browser with no `node:` import. */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

describe('isomorphic-analytics/webhooks', () => {
  it('bundles for the browser platform without any node: (or bare builtin) import', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../../src/webhooks/index.ts', import.meta.url))],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'browser',
      metafile: true,
      logLevel: 'silent',
      define: { __VERSION__: '"0.0.0"' },
    })
    const imports = Object.values(result.metafile.inputs).flatMap((input) => input.imports.map((i) => i.path))
    expect(imports.filter((path) => path.startsWith('node:'))).toEqual([])
    expect(Object.keys(result.metafile.inputs).some((file) => file.includes('src/webhooks/destination.ts'))).toBe(true)
    const source = result.outputFiles[0].text
    expect(source).not.toMatch(/\bfrom\s*["']node:|require\(["']node:/)
  })
})
