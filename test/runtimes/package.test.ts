/**
 * The packed tarball (`npm pack`), as published: `publint --strict` and `@arethetypeswrong/cli`
 * pass on it, and its `exports` map offers every entry point of the public contract with types
 * first, for both `import` and `require`, plus the CLI bin and the IIFE file for `<script>` users.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild, ROOT, run, scratchDir } from './support/runtimes.js'

let scratch: ReturnType<typeof scratchDir>
let tarball: string
let manifest: { exports: Record<string, unknown>; bin?: Record<string, string> | string; files?: string[]; license: string }
let packed: string[]

beforeAll(() => {
  requireBuild('index.js', 'index.cjs', 'index.d.ts', 'index.d.cts', 'isomorphic-analytics.global.js')
  scratch = scratchDir('package')
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', scratch.dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const [info] = JSON.parse(out) as Array<{ filename: string; files: Array<{ path: string }> }>
  tarball = join(scratch.dir, info.filename)
  packed = info.files.map((f) => f.path)
  manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
}, 120_000)

afterAll(() => scratch?.remove())

const bin = (name: string) => join(ROOT, 'node_modules/.bin', name)

describe('the packed package', () => {
  it('passes publint --strict', async () => {
    const result = await run(bin('publint'), ['--strict', tarball], { timeoutMs: 60_000 })
    expect(result.code, result.stdout + result.stderr).toBe(0)
  }, 90_000)

  it('passes @arethetypeswrong/cli (every entry, node10/node16 CJS+ESM/bundler)', async () => {
    const result = await run(bin('attw'), [tarball, '--format', 'ascii'], { timeoutMs: 60_000 })
    expect(result.code, result.stdout + result.stderr).toBe(0)
  }, 90_000)

  it('ships the builds every runtime test uses, and the <script> build', () => {
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'dist/isomorphic-analytics.global.js']) {
      expect(packed).toContain(file)
    }
  })

  it('ships LICENSE, and no source-map reference to a file it does not have', () => {
    expect(packed).toContain('LICENSE')
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(new RegExp(`^${manifest.license} License`))
    for (const file of packed.filter((f) => /\.(c|m)?js$/.test(f))) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(readFileSync(join(ROOT, file), 'utf8'))?.[1]
      if (url !== undefined) expect(packed, `${file} points at ${url}`).toContain(join(file, '..', url))
    }
  })

  it('refers to no document a user does not have (README, type declarations, code)', () => {
    for (const file of packed.filter((f) => /\.(md|d\.c?ts|c?js)$/.test(f))) {
      expect(readFileSync(join(ROOT, file), 'utf8'), file).not.toMatch(/\bseed\b|API\.md|STYLE\.md|BRIEF\.md/i)
    }
  })

  it('exports every entry point of the contract, types first, for import and require', () => {
    for (const entry of ['.', './webhooks', './collector', './testing']) {
      const conditions = manifest.exports[entry] as Record<string, Record<string, string>> | undefined
      expect(conditions, `exports["${entry}"] is missing from package.json`).toBeDefined()
      for (const kind of ['import', 'require'] as const) {
        expect(Object.keys(conditions![kind] ?? {}), `exports["${entry}"].${kind}`).toEqual(['types', 'default'])
        for (const file of Object.values(conditions![kind])) expect(packed).toContain(file.replace(/^\.\//, ''))
      }
    }
    const bins = typeof manifest.bin === 'string' ? { 'isomorphic-analytics': manifest.bin } : (manifest.bin ?? {})
    expect(bins['isomorphic-analytics'], 'package.json bin "isomorphic-analytics"').toBeDefined()
  })
})
