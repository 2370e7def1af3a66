/** docs (the webhooks pages): their defaults agree with the code, and their examples run. */
import { createHmac } from 'node:crypto'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { WEBHOOK_DEFAULTS, WEBHOOK_USER_AGENT, toWebhookPayload } from '../../src/webhooks/index.js'
import { readDoc } from '../helpers/docs.js'
import { bundleWebhooks } from './bundle.js'

const docs = readDoc('docs/sending-webhooks.md') + readDoc('docs/receiving-webhooks.md')
const codeBlocks = [...docs.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1])
const cleanups: string[] = []
afterAll(() => cleanups.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

describe('docs: webhooks', () => {
  it('the options table states the defaults the code uses', () => {
    const rows = new Map(
      [...docs.matchAll(/^\| `([\w.]+)` \| [^|]+ \| ([^|]+) \|/gm)].map((m) => [m[1], m[2].trim()]),
    )
    const number = (option: string) => Number(rows.get(option)!.replace(/`/g, ''))
    expect(number('timeout')).toBe(WEBHOOK_DEFAULTS.timeout)
    expect(number('retryWindow')).toBe(WEBHOOK_DEFAULTS.retryWindow)
    expect(number('backoff.baseMs')).toBe(WEBHOOK_DEFAULTS.backoff.baseMs)
    expect(number('backoff.capMs')).toBe(WEBHOOK_DEFAULTS.backoff.capMs)
    expect(docs).toContain(`| \`User-Agent\` | \`${WEBHOOK_USER_AGENT}\` |`)
  })

  it('shows examples/webhook-receiver-node.mjs verbatim', () => {
    const example = readFileSync(new URL('../../examples/webhook-receiver-node.mjs', import.meta.url), 'utf8')
    expect(codeBlocks).toContain(example)
  })

  it('the createWebhookHandler example accepts a signed request and refuses a forged one', async () => {
    const block = codeBlocks.find((code) => code.includes('createWebhookHandler({'))!
    const { dir, file } = await bundleWebhooks()
    cleanups.push(dir)
    const module = join(dir, 'docs-handler.mjs')
    writeFileSync(module, block.replace("'isomorphic-analytics/webhooks'", JSON.stringify(pathToFileURL(file).href)))
    vi.stubEnv('WEBHOOK_SECRET', 'docs-secret')
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    try {
      const { handler } = (await import(pathToFileURL(module).href)) as { handler: (r: Request) => Promise<Response> }
      const body = JSON.stringify(toWebhookPayload({ type: 'track', event: 'Signed Up', userId: 'u-7' }))
      const request = (signature: string) =>
        new Request('http://localhost/api/webhooks', { method: 'POST', body, headers: { 'X-Signature': signature } })
      const good = createHmac('sha1', 'docs-secret').update(body).digest('hex')
      expect((await handler(request(good))).status).toBe(200)
      expect(log).toHaveBeenCalledWith('u-7 did Signed Up')
      expect((await handler(request(good.replace(/^./, good[0] === 'a' ? 'b' : 'a')))).status).toBe(401)
    } finally {
      log.mockRestore()
      vi.unstubAllEnvs()
    }
  })
})
