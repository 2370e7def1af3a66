/**
 * The tracking-plan page's first example runs as pasted (from the build, importing the package by
 * name, TypeScript stripped by esbuild) and prints what its comments say. Its client's endpoint
 * (https://collector.example.com) is sent to a loopback recorder by the preload that redirects
 * fetch and node:http(s) (support/redirect.ts; the client sends over node:http on Node), so the
 * test also sees what was sent: the two valid tracks, not the one zod refused.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { transform } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readDoc } from './helpers/docs.js'
import { REDIRECT } from './runtimes/support/redirect.js'
import { expectCleanExit, requireBuild, ROOT, run, scratchDir } from './runtimes/support/runtimes.js'

const section = readDoc('docs/tracking-plans.md')
const example = /^```ts\n([\s\S]*?)^```/m.exec(section)?.[1] ?? ''

let scratch: ReturnType<typeof scratchDir>
let recorder: Server
const sent: Array<{ event: string; properties: Record<string, unknown> }> = []

beforeAll(async () => {
  requireBuild('index.js', 'collector.js')
  scratch = scratchDir('tracking-plan-docs')
  recorder = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => (body += c.toString()))
    req.on('end', () => {
      sent.push(...(JSON.parse(body) as { batch: typeof sent }).batch)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
    })
  })
  await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve))
})

afterAll(async () => {
  await new Promise((resolve) => recorder?.close(resolve))
  scratch?.remove()
})

describe('docs: Tracking plans example', () => {
  it('runs: zod keeps the bad track back, the collector blocks two of three and answers 200', async () => {
    expect(example).toContain("from 'zod'")
    const { code } = await transform(example, { loader: 'ts', format: 'esm' })
    writeFileSync(join(scratch.dir, 'example.mjs'), code)
    writeFileSync(join(scratch.dir, 'redirect.mjs'), REDIRECT)
    const recorderUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`
    const result = await run(process.execPath, ['--import', './redirect.mjs', 'example.mjs'], {
      cwd: scratch.dir,
      env: { WRITE_KEY: 'docs-key', DOCS_RECORDER: recorderUrl },
      timeoutMs: 30_000,
    })
    expectCleanExit(result, 'the example')
    expect(result.stderr).toBe('')
    expect(result.stdout.trim().split('\n')).toEqual([
      'not sent: Event "Order Completed" does not match its schema: properties.total: Invalid input: expected number, received string.',
      '{ delivered: 2, failed: 0 }',
      '200 2',
    ])
    expect(sent.map((m) => [m.event, m.properties])).toEqual([
      ['Order Completed', { orderId: 'o-1', total: 42.5, currency: 'EUR' }],
      ['Signed Up', undefined],
    ])
  }, 40_000)
})
