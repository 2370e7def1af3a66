/**
 * Child-process tests: a pending retry never keeps Node alive, and the Node receiver example
 * verifies what a WebhookDestination sends. Both run the bundled current source.
 */
import { spawn } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebhookDestination, toWebhookPayload } from '../../src/webhooks/index.js'
import { bundleWebhooks } from './bundle.js'
import { startServer } from './servers.js'

let bundle: { dir: string; file: string }

beforeAll(async () => {
  bundle = await bundleWebhooks()
})

afterAll(() => {
  rmSync(bundle.dir, { recursive: true, force: true })
})

interface Child {
  stdout: string
  stderr: string
  exited: Promise<{ code: number | null; ms: number }>
  kill(): void
  /** Resolves with the first stdout line matching `pattern`. */
  line(pattern: RegExp): Promise<RegExpMatchArray>
}

function run(script: string, env: Record<string, string> = {}): Child {
  const started = performance.now()
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const result: Child = {
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.on('exit', (code) => resolve({ code, ms: performance.now() - started }))),
    kill: () => child.kill(),
    line: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = result.stdout.match(pattern)
          if (match) resolve(match)
        }
        child.stdout.on('data', check)
        child.on('exit', () => reject(new Error(`exited without printing ${pattern}; stdout: ${result.stdout}`)))
        check()
      }),
  }
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (result.stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    result.stderr += chunk
    process.stderr.write(chunk)
  })
  return result
}

describe('in a Node process', () => {
  it('a delivery waiting to retry does not keep the process alive', async () => {
    const server = await startServer({ status: 503 })
    const script = join(bundle.dir, 'pending-retry.mjs')
    writeFileSync(
      script,
      `import { WebhookDestination } from ${JSON.stringify(pathToFileURL(bundle.file).href)}
const destination = new WebhookDestination({ urls: [{ url: process.env.URL }], backoff: { baseMs: 60000, capMs: 60000 }, random: () => 0.99 })
destination.on('retry', ({ delayMs }) => console.log('retry scheduled in ' + delayMs + ' ms'))
void destination.deliver({ type: 'track', event: 'x' }) // not awaited
`,
    )
    try {
      const child = run(script, { URL: server.url })
      const { code, ms } = await child.exited
      expect(child.stdout).toContain('retry scheduled in 59400 ms')
      expect(code).toBe(0)
      expect(ms).toBeLessThan(10_000)
      expect(server.requests).toHaveLength(1)
    } finally {
      await server.close()
    }
  })

  // deliverSerialized too: it let the process exit in its retry wait (exit code 13, the message lost).
  it.each([
    ['deliver', 'destination.deliver(toWebhookPayload(message))'],
    ['deliverSerialized', 'destination.deliverSerialized(JSON.stringify(toWebhookPayload(message)))'],
  ])('an awaited %s holds the process through its retry wait (the README example, one 503)', async (name, call) => {
    const server = await startServer({ status: 200 })
    server.replies.push({ status: 503 })
    const script = join(bundle.dir, `awaited-retry-${name}.mjs`)
    writeFileSync(
      script,
      `import { WebhookDestination, toWebhookPayload } from ${JSON.stringify(pathToFileURL(bundle.file).href)}
const destination = new WebhookDestination({ urls: [{ url: process.env.URL }], backoff: { baseMs: 300, capMs: 300 }, random: () => 0.99 })
destination.on('retry', ({ delayMs }) => console.log('retry in ' + delayMs + ' ms'))
const message = { type: 'track', userId: 'user-1', event: 'Order Completed', properties: { total: 42.5 } }
const result = await ${call}
console.log('result ' + JSON.stringify({ delivered: result.delivered, attempts: result.attempts }))
await destination.close()
`,
    )
    try {
      const child = run(script, { URL: server.url })
      const { code } = await child.exited
      expect(child.stdout).toContain('retry in 297 ms')
      expect(child.stdout).toContain('result {"delivered":true,"attempts":2}')
      expect(code).toBe(0)
      expect(server.requests).toHaveLength(2)
    } finally {
      await server.close()
    }
  })

  // Each waiting delivery listens for close(): an AbortSignal warned of a leak past ten of them.
  it('many deliveries waiting to retry at once print no MaxListenersExceededWarning', async () => {
    const server = await startServer({ status: 503 })
    const script = join(bundle.dir, 'many-waiting.mjs')
    writeFileSync(
      script,
      `import { WebhookDestination } from ${JSON.stringify(pathToFileURL(bundle.file).href)}
const destination = new WebhookDestination({ urls: [{ url: process.env.URL }], backoff: { baseMs: 200, capMs: 200 }, random: () => 0.99 })
let waiting = 0
destination.on('retry', () => ++waiting === 20 && destination.close())
const results = await Promise.all(Array.from({ length: 20 }, (_, i) => destination.deliver({ type: 'track', event: 'e' + i })))
console.log('failed ' + results.filter((r) => !r.delivered && r.error.code === 'ABORTED').length)
`,
    )
    try {
      const child = run(script, { URL: server.url })
      const { code } = await child.exited
      expect(child.stdout).toContain('failed 20')
      expect(code).toBe(0)
      expect(child.stderr).not.toMatch(/MaxListenersExceeded|memory leak/)
    } finally {
      await server.close()
    }
  })

  it('examples/webhook-receiver-node.mjs accepts a signed delivery and refuses a forged one', async () => {
    const example = readFileSync(new URL('../../examples/webhook-receiver-node.mjs', import.meta.url), 'utf8')
    expect(example).toContain("from 'isomorphic-analytics/webhooks'")
    const script = join(bundle.dir, 'receiver.mjs')
    writeFileSync(script, example.replace("'isomorphic-analytics/webhooks'", JSON.stringify(pathToFileURL(bundle.file).href)))
    const child = run(script, { PORT: '0', WEBHOOK_SECRET: 'example-secret' })
    try {
      const [, url] = await child.line(/Listening on (http:\/\/\S+)/)
      const payload = toWebhookPayload({ type: 'track', event: 'Café ☕ Ordered', userId: 'u-1', properties: { size: 'grande' } })
      const signed = await new WebhookDestination({ urls: [{ url }], sharedSecret: 'example-secret' }).deliver(payload)
      expect(signed).toMatchObject({ delivered: true, results: [{ status: 200 }] })
      await child.line(/received track from u-1/)
      const forged = await new WebhookDestination({ urls: [{ url }], sharedSecret: 'wrong-secret', retryWindow: 0 }).deliver(payload)
      expect(forged).toMatchObject({ delivered: false, results: [{ status: 401 }] })
      const unsigned = await new WebhookDestination({ urls: [{ url }], retryWindow: 0 }).deliver(payload)
      expect(unsigned).toMatchObject({ delivered: false, results: [{ status: 401 }] })
    } finally {
      child.kill()
      await child.exited
    }
  })
})
