/**
 * The exit guarantee in real processes (no test runner keeping the event loop alive): a script
 * tracks 2,000 events against a loopback server that answers 500 to 30 % of requests and resets
 * 2 % of connections (seeded), then awaits `close()`: with ESM top-level await and with a
 * CommonJS async main, under Node 20, Node 24, Bun and Deno. close() must resolve, the process
 * must exit 0, every message must be delivered or reported through 'error', and the server must
 * hold every message the client counted as delivered.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { DIST, expectCleanExit, requireBinary, requireBuild, run, scratchDir, writeFiles, type BINARIES } from './support/runtimes.js'

const EVENTS = 2000

/** mulberry32: a small seeded PRNG, so every run sees the same sequence of answers. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

let server: Server
let endpoint: string
let random = seeded(9)
/** messageIds in requests answered 200. */
let stored = new Set<string>()
const answered = { ok: 0, errors: 0, resets: 0 }

let scratch: ReturnType<typeof scratchDir>

const BODY = `
const endpoint = globalThis.Deno ? Deno.args[0] : process.argv[2]
const client = new Client('exit-key', { endpoint, maxRetries: 2, maxQueueSize: 1500 })
const delivered = []
const reported = []
client.on('flush', (e) => { for (const m of e.messages) delivered.push(m.messageId) })
client.on('error', (e) => { for (const m of e.messages) reported.push(m.messageId) })
for (let i = 0; i < ${EVENTS}; i++) client.track({ userId: 'u-' + (i % 50), event: 'Exit Test', properties: { i } })
`
const PRINT = `console.log('RESULT ' + JSON.stringify({ result, stats: client.stats(), delivered, reported }))`

beforeAll(async () => {
  requireBuild('index.js', 'index.cjs')
  server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const roll = random()
      if (roll < 0.02) {
        answered.resets++
        req.socket.resetAndDestroy()
        return
      }
      if (roll < 0.32) {
        // The first 500 of a run also holds its batch with a Retry-After.
        const retryAfter = answered.errors++ === 0 ? { 'retry-after': '1' } : {}
        res.writeHead(500, { 'content-type': 'application/json', ...retryAfter }).end('{"success":false}')
        return
      }
      answered.ok++
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { batch: Array<{ messageId: string }> }
      for (const m of body.batch) stored.add(m.messageId)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  scratch = scratchDir('exit-guarantee')
  writeFiles(scratch.dir, {
    'tla.mjs': `import { Client } from ${JSON.stringify(pathToFileURL(join(DIST, 'index.js')).href)}\n${BODY}\nconst result = await client.close()\n${PRINT}\n`,
    'main.cjs': `const { Client } = require(${JSON.stringify(join(DIST, 'index.cjs'))})\n;(async () => {\n${BODY}\nconst result = await client.close()\n${PRINT}\n})()\n`,
  })
}, 60_000)

beforeEach(() => {
  random = seeded(9)
  stored = new Set()
  Object.assign(answered, { ok: 0, errors: 0, resets: 0 })
})

afterAll(async () => {
  server?.closeAllConnections()
  await new Promise((resolve) => server?.close(resolve))
  scratch?.remove()
})

const RUNTIMES: Array<[string, keyof typeof BINARIES, string[]]> = [
  ['Node 20', 'node20', []],
  ['Node 24', 'node24', []],
  ['Bun', 'bun', []],
  ['Deno', 'deno', ['run', '--allow-net=127.0.0.1', '--allow-read', '--no-prompt']],
]

describe.each(RUNTIMES)('%s: await close() against a flaky server', (label, binary, flags) => {
  it.each([
    ['ESM top-level await', 'tla.mjs'],
    ['CommonJS async main', 'main.cjs'],
  ])('%s: resolves, exits 0, and every message is delivered or reported', async (_name, script) => {
    const result = await run(requireBinary(binary), [...flags, script, endpoint], { cwd: scratch.dir, timeoutMs: 60_000 })
    expectCleanExit(result, `${label} ${script}`)
    const line = result.stdout.split(/\r?\n/).find((l) => l.startsWith('RESULT '))
    if (!line) throw new Error(`close() never resolved (no RESULT line)\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`)
    const { result: closed, stats, delivered, reported } = JSON.parse(line.slice(7)) as {
      result: { delivered: number; failed: number }
      stats: { delivered: number; failed: number; dropped: number; queued: number; inFlight: number }
      delivered: string[]
      reported: string[]
    }
    // The server really failed requests, so retries really happened while close() was awaited.
    expect(answered.errors + answered.resets).toBeGreaterThan(0)
    // maxQueueSize 1500 with flushAt 20: the synchronous loop drops exactly 500 (maxRetries 2 also
    // lets a few batches fail for good, so both kinds of report are exercised).
    expect(stats.dropped).toBe(500)
    expect(closed.delivered + closed.failed + stats.dropped).toBe(EVENTS)
    expect(stats).toMatchObject({ queued: 0, inFlight: 0, delivered: closed.delivered, failed: closed.failed })
    expect(delivered).toHaveLength(closed.delivered)
    // Every failure and every drop was reported through 'error'.
    expect(reported).toHaveLength(closed.failed + stats.dropped)
    expect(new Set([...delivered, ...reported]).size).toBe(EVENTS)
    // The server holds every message the client counted as delivered.
    for (const id of delivered) if (!stored.has(id)) throw new Error(`${id} was counted as delivered but never stored`)
  }, 90_000)
})
