/**
 * `npm start` (examples/pipeline.mjs) as users run it: against the build, as a child process.
 * It must exit 0 having shown every call type, the deletion and the audience sync arrive signed.
 */
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = resolve(__dirname, '../..')

describe('examples/pipeline.mjs (npm start)', () => {
  it('runs the whole pipeline on loopback and exits 0 with every signature verified', () => {
    for (const file of ['index.js', 'collector.js', 'webhooks.js']) {
      if (!existsSync(join(ROOT, 'dist', file))) throw new Error(`dist/${file} is missing: run \`npm run build\` first.`)
    }
    const run = spawnSync(process.execPath, [join(ROOT, 'examples/pipeline.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 })
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0)
    for (const type of ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete']) {
      expect(run.stdout).toMatch(new RegExp(`✓ ${type} +userId=`))
    }
    expect(run.stdout).toContain('traits={"power_users":false}')
    expect(run.stdout).not.toContain('✗')
    expect(run.stdout).toContain('✓ All 11 payloads arrived and every signature verified.')
  }, 40_000)
})
