/**
 * Each server runtime's default transport, through the packed package: on Node (20 and 24) the
 * `node:http` keep-alive transport, on Bun and Deno their fetch. One script per runtime sends a
 * gzip body, rides out a 429 with `Retry-After`, gives up on a server that never answers
 * (`timeout`), and refuses a self-signed certificate (a `TlsError`, not retried), all against
 * loopback servers started here.
 */
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selfSignedCertificate, startHttpsServer, startServer, type TestServer } from '../webhooks/servers.js'
import { expectCleanExit, installPacked, requireBinary, requireBuild, run, scratchDir, writeFiles, type RunResult } from './support/runtimes.js'

const RETRY_AFTER_MS = 400

// Every case closes its client (which flushes) before the next starts; each prints one RESULT line.
const SCRIPT = `import { Client } from 'isomorphic-analytics'
const [plan] = globalThis.Deno ? Deno.args : process.argv.slice(2)
const endpoints = JSON.parse(plan)
async function send(name, options) {
  const client = new Client('rt-key', { endpoint: endpoints[name], flushAt: 100, flushAfter: 60_000, maxRetries: 0, ...options })
  const seen = { retries: [], errors: [], deliveredAt: undefined }
  client.on('retry', (r) => seen.retries.push({ at: Date.now(), code: r.error.code, status: r.error.status, retryAfterMs: r.error.retryAfterMs }))
  client.on('flush', () => (seen.deliveredAt = Date.now()))
  client.on('error', (e) => seen.errors.push({ name: e.name, code: e.code, messages: e.messages.length, message: e.message }))
  const id = client.track({ userId: 'u-' + name, event: name }).messageId
  const result = await client.close()
  console.log('RESULT ' + JSON.stringify({ name, id, result, ...seen }))
}
await send('gzip', { gzip: true })
await send('retryAfter', { maxRetries: 1, minRetryDelay: 1, maxRetryDelay: 5 })
await send('timeout', { timeout: 300 })
await send('tls', {})
`

interface CaseResult {
  name: string
  id: string
  result: { delivered: number; failed: number }
  retries: Array<{ at: number; code: string; status?: number; retryAfterMs?: number }>
  errors: Array<{ name: string; code: string; messages: number }>
  deliveredAt?: number
}

let scratch: ReturnType<typeof scratchDir>
const servers: TestServer[] = []

beforeAll(async () => {
  requireBuild('index.js')
  scratch = scratchDir('transport')
  installPacked(scratch.dir)
  writeFiles(scratch.dir, { 'transport.mjs': SCRIPT })
}, 120_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
  scratch?.remove()
})

async function endpoints() {
  const gzip = await startServer()
  const retryAfter = await startServer()
  retryAfter.replies.push({ status: 429, headers: { 'retry-after': String(RETRY_AFTER_MS / 1000) } })
  const timeout = await startServer({ status: 200, hang: true })
  const tls = await startHttpsServer(selfSignedCertificate())
  const all = { gzip, retryAfter, timeout, tls }
  servers.push(...Object.values(all))
  const plan = Object.fromEntries(Object.entries(all).map(([name, s]) => [name, s.url.replace(/\/hook$/, '')]))
  return { ...all, plan: JSON.stringify(plan) }
}

function results(result: RunResult, what: string): Record<string, CaseResult> {
  expectCleanExit(result, what)
  const lines = result.stdout.split(/\r?\n/).filter((l) => l.startsWith('RESULT '))
  return Object.fromEntries(lines.map((l) => JSON.parse(l.slice(7)) as CaseResult).map((r) => [r.name, r]))
}

const RUNTIMES = [
  ['Node 20', 'node20', 'node:http'],
  ['Node 24', 'node24', 'node:http'],
  ['Bun', 'bun', 'fetch'],
  ['Deno', 'deno', 'fetch'],
] as const

describe.each(RUNTIMES)('%s (%s)', (label, binary, transport) => {
  it(`delivers gzip, honours Retry-After, times out, refuses a bad certificate (${transport})`, async () => {
    const s = await endpoints()
    const args = binary === 'deno' ? ['run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', 'transport.mjs', s.plan] : ['transport.mjs', s.plan]
    const r = results(await run(requireBinary(binary), args, { cwd: scratch.dir, timeoutMs: 30_000 }), label)

    // gzip: one request, compressed, carrying the message.
    expect(r.gzip.result).toEqual({ delivered: 1, failed: 0 })
    const [zipped] = s.gzip.requests
    expect(zipped.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(zipped.raw).toString('utf8')).batch[0].messageId).toBe(r.gzip.id)
    // Which transport sent it: fetch (undici's, Bun's, Deno's) adds a user-agent; node:http adds none.
    if (transport === 'node:http') {
      expect(zipped.headers['sec-fetch-mode']).toBeUndefined()
      expect(zipped.headers['user-agent']).toBeUndefined()
      expect(zipped.headers.connection).toBe('keep-alive')
    } else {
      expect(zipped.headers['user-agent']).toMatch(binary === 'bun' ? /^Bun\// : /^Deno\//)
    }

    // Retry-After: the 429's header read through the transport, and waited for (the backoff is ≤ 5 ms).
    expect(r.retryAfter.result).toEqual({ delivered: 1, failed: 0 })
    expect(r.retryAfter.retries).toMatchObject([{ code: 'HTTP', status: 429, retryAfterMs: RETRY_AFTER_MS }])
    expect(r.retryAfter.deliveredAt! - r.retryAfter.retries[0].at).toBeGreaterThanOrEqual(RETRY_AFTER_MS - 20)
    expect(s.retryAfter.requests).toHaveLength(2)

    // timeout: the hanging server is given up on and the message reported.
    expect(r.timeout.result).toEqual({ delivered: 0, failed: 1 })
    expect(r.timeout.errors).toMatchObject([{ name: 'TimeoutError', code: 'TIMEOUT', messages: 1 }])

    // TLS: a self-signed certificate is refused and named as such.
    expect(r.tls.result).toEqual({ delivered: 0, failed: 1 })
    expect(r.tls.errors).toMatchObject([{ name: 'TlsError', code: 'TLS', messages: 1 }])
  }, 60_000)
})
