/**
 * The portable path of Standard Webhooks signatures, in real Chromium: no `node:crypto` there, so
 * signing, the `webhook-id` hash and verification go through `@noble/hashes`. What the browser
 * build sends passes the official `standardwebhooks` verifier in Node, and what that package
 * signs passes `createWebhookHandler` in the browser.
 */
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { chromium, type Browser } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const SECRET = `whsec_${randomBytes(32).toString('base64')}`
const BODY_OF = (event: string) => JSON.stringify({ version: 1, type: 'track', messageId: 'm-1', userId: 'u', event, properties: {}, timestamp: '2026-11-22T10:00:00.000Z', context: {} })

let browser: Browser
let script: string
beforeAll(async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../../src/webhooks/index.ts', import.meta.url))],
    bundle: true, write: false, format: 'iife', globalName: 'Webhooks', platform: 'browser', logLevel: 'silent',
    define: { __VERSION__: '"0.0.0"' },
  })
  script = result.outputFiles[0].text
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless'] })
}, 60_000)
afterAll(() => browser?.close())

describe('Standard Webhooks in Chromium (the pure-JS hashes)', () => {
  it('signs what the official verifier accepts, and verifies what the official signer signs', async () => {
    const page = await browser.newPage()
    await page.addScriptTag({ content: script })
    const body = BODY_OF('Browser Sent')
    const sent = await page.evaluate(async ({ secret, body }) => {
      const { WebhookDestination } = (globalThis as unknown as { Webhooks: typeof import('../../src/webhooks/index.js') }).Webhooks
      const calls: Array<{ headers: Record<string, string>; body: string }> = []
      const fetch = async (_url: string, init?: RequestInit) => {
        calls.push({ headers: Object.fromEntries(new Headers(init?.headers).entries()), body: String(init?.body) })
        return new Response('ok')
      }
      const destination = new WebhookDestination({ urls: [{ url: 'https://hooks.test/in' }], standardSecrets: [secret], fetch })
      const result = await destination.deliverSerialized(body)
      return { delivered: result.delivered, hasNodeCrypto: typeof (globalThis as { process?: unknown }).process !== 'undefined', ...calls[0] }
    }, { secret: SECRET, body })
    expect(sent).toMatchObject({ delivered: true, hasNodeCrypto: false, body })
    expect(sent.headers['webhook-id']).toMatch(/^msg_/)
    expect(new Webhook(SECRET).verify(sent.body, sent.headers)).toEqual(JSON.parse(body))

    const incoming = BODY_OF('Node Signed')
    const now = new Date()
    const headers = { 'webhook-id': 'msg_node', 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(SECRET).sign('msg_node', now, incoming) }
    const answers = await page.evaluate(async ({ secret, body, headers }) => {
      const { createWebhookHandler } = (globalThis as unknown as { Webhooks: typeof import('../../src/webhooks/index.js') }).Webhooks
      const handler = createWebhookHandler({ standardSecrets: [secret], onEvent: () => {} })
      const post = (text: string) => handler(new Request('https://receiver.test/', { method: 'POST', body: text, headers }))
      return [(await post(body)).status, (await post(body.replace('Node', 'Nodf'))).status]
    }, { secret: SECRET, body: incoming, headers })
    expect(answers).toEqual([200, 401])
    await page.close()
  }, 60_000)
})
