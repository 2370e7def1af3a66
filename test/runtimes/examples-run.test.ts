/**
 * Every file in examples/ runs from the packed tarball, importing `isomorphic-analytics` by name as
 * users do (in the project of support/docs-project.ts, as the README's blocks in docs-run.test.ts):
 * each script to completion or, for a receiver, until it has accepted a signed webhook.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { clean, postSignedTrack, untilOutput, useDocsProject } from './support/docs-project.js'
import { ROOT } from './support/runtimes.js'

const project = useDocsProject('examples-run')
const { node, whileListening } = project

describe('every file in examples/ runs from the packed package', () => {
  const files = readdirSync(join(ROOT, 'examples'))

  it('examples/ holds what this test runs', () => {
    expect(files.sort()).toEqual(['cluster.mjs', 'pipeline.mjs', 'quick-start.mjs', 'webhook-receiver-express.md', 'webhook-receiver-node.mjs'])
  })

  it('cluster.mjs: two collectors on one redis-server, one SIGKILLed mid-stream, every message arrives', async () => {
    const result = await node(['examples/cluster.mjs'], {}, 90_000)
    clean(result, 'examples/cluster.mjs')
    expect(result.stdout).toMatch(/^✓ all 5000 messages arrived \(\d+ twice after the kill: at-least-once\); 0 bad signatures$/m)
  }, 100_000)

  it('quick-start.mjs sends six calls to its loopback receiver and prints them', async () => {
    const result = await node(['examples/quick-start.mjs'])
    clean(result, 'examples/quick-start.mjs')
    expect(result.stdout).toMatch(/^sent 6 calls to http:\/\/127\.0\.0\.1:\d+\/v1\/batch: 6 delivered, 0 failed$/m)
  })

  it('webhook-receiver-express.md: its Express receiver accepts a signed webhook', async () => {
    const [, code] = /```js\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'examples/webhook-receiver-express.md'), 'utf8'))!
    writeFileSync(join(project.dir, 'express-receiver.mjs'), code)
    const exit = await whileListening(['express-receiver.mjs'], async (url, output) => {
      expect(await postSignedTrack(url)).toBe(200)
      await untilOutput(output, /user-1 did Docs Ran/)
    })
    expect(exit === 0 || exit === null).toBe(true)
  })

  it('webhook-receiver-node.mjs accepts a signed webhook', async () => {
    const code = await whileListening(['examples/webhook-receiver-node.mjs'], async (url, output) => {
      expect(await postSignedTrack(url)).toBe(200)
      await untilOutput(output, /received track from user-1/)
    })
    expect(code === 0 || code === null).toBe(true)
  })
})
