/**
 * `npm run cluster`: several collectors sharing one Redis, and what survives a SIGKILL.
 *
 *   sender ──round robin──▶ collector A ─┐                 ┌──▶ receiver (verifies X-Signature)
 *                          collector B ─┴── Redis (BullMQ) ─┘
 *
 * Starts redis-server (loopback, a temporary directory; Debian: apt-get install redis-server), a
 * webhook receiver and two collector processes (this file with `--collector`: `createCollector`
 * with `queue: 'redis://…'`; needs `npm install bullmq ioredis`). Sends 5,000
 * messages in batches of 20, alternating between the collectors, and kills collector A with
 * SIGKILL half-way; batches A can no longer take are sent to B, as a load balancer would. Then
 * waits until every message answered 200 has reached the receiver, and prints how many arrived
 * twice (at-least-once: those A was attempting when it died). Exits 0 only if none is missing.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createCollector, nodeFetch, startServer } from 'isomorphic-analytics/collector'
import { verifySignature } from 'isomorphic-analytics/webhooks'

const MESSAGES = 5_000
const BATCH = 20

// ── A collector process: `node cluster.mjs --collector` (settings in the environment). ──
if (process.argv[2] === '--collector') {
  const { QUEUE, WRITE_KEY, WEBHOOK, SECRET } = process.env
  const collector = createCollector({
    sources: [{ writeKey: WRITE_KEY, name: 'web', webhooks: { urls: [{ url: WEBHOOK }], sharedSecret: SECRET } }],
    queue: QUEUE, // every collector on this Redis shares the deliveries
    fetch: nodeFetch,
  })
  const server = await startServer(collector, { port: 0, host: '127.0.0.1' })
  console.log(`listening on ${server.url}`)
  process.once('SIGTERM', async () => {
    await server.close(1_000)
    await collector.close(2_000)
    process.exit(0)
  })
} else {
  await main()
}

/** redis-server on a free loopback port, its data in a temporary directory. */
async function startRedis() {
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
  const dir = mkdtempSync(join(tmpdir(), 'cluster-redis-'))
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes'], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => (out += chunk) && /Ready to accept connections/.test(out) && resolve())
    child.once('error', (error) => reject(new Error(`redis-server could not start (Debian: apt-get install redis-server): ${error.message}`)))
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${out}`)))
  })
  child.stdout.resume()
  const stop = () => new Promise((resolve) => {
    child.once('exit', () => resolve(rmSync(dir, { recursive: true, force: true })))
    child.kill('SIGTERM')
  })
  return { url: `redis://127.0.0.1:${port}`, stop }
}

async function main() {
  const secret = randomBytes(16).toString('hex')
  const writeKey = `wk_${randomBytes(8).toString('hex')}`

  const deadline = setTimeout(() => {
    console.error('\n✗ Not every message arrived within 90 s.')
    process.exit(1)
  }, 90_000)

  const received = new Map() // messageId → times received
  let badSignatures = 0
  const receiver = createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks)
      if (!(await verifySignature(raw, req.headers['x-signature'], secret))) badSignatures++
      const { messageId } = JSON.parse(raw.toString('utf8'))
      received.set(messageId, (received.get(messageId) ?? 0) + 1)
      res.writeHead(200).end()
    })
  })
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const hook = `http://127.0.0.1:${receiver.address().port}/hook`

  const redis = await startRedis()
  console.log(`redis-server on ${redis.url}`)

  function collector(name) {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--collector'], {
      env: { ...process.env, QUEUE: redis.url, WRITE_KEY: writeKey, WEBHOOK: hook, SECRET: secret },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    return new Promise((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (chunk) => {
        out += chunk
        const url = /listening on (http:\/\/\S+)/.exec(out)?.[1]
        if (url) {
          child.stdout.removeAllListeners('data').resume()
          console.log(`collector ${name} on ${url} (pid ${child.pid})`)
          resolve({ name, child, url })
        }
      })
      child.once('exit', (code) => reject(new Error(`collector ${name} exited (${code}) before listening:\n${out}`)))
    })
  }

  const a = await collector('A')
  const b = await collector('B')

  async function post(target, from) {
    const batch = Array.from({ length: BATCH }, (_, i) => ({ type: 'track', event: 'Order Completed', userId: `u${(from + i) % 100}`, messageId: `m-${from + i}`, properties: { n: from + i } }))
    try {
      const response = await fetch(`${target.url}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${btoa(`${writeKey}:`)}` },
        body: JSON.stringify({ batch }),
      })
      return response.status
    } catch {
      return 0 // the process is gone
    }
  }

  let accepted = 0
  let aAlive = true
  for (let from = 0; from < MESSAGES; from += BATCH) {
    if (aAlive && from >= MESSAGES / 2) {
      a.child.kill('SIGKILL')
      aAlive = false
      console.log(`SIGKILL collector A after ${accepted} messages were accepted (its pending deliveries are in Redis)`)
    }
    const first = aAlive && (from / BATCH) % 2 === 0 ? a : b
    // Not answered 200 (A just died): the sender sends the batch again, to B.
    const status = (await post(first, from)) === 200 ? 200 : await post(b, from)
    if (status !== 200) throw new Error(`batch at ${from}: ${status}`)
    accepted += BATCH
  }
  console.log(`${accepted} messages accepted (answered 200); waiting for the receiver…`)

  while (received.size < accepted) await new Promise((resolve) => setTimeout(resolve, 100))
  const duplicates = [...received.values()].reduce((sum, n) => sum + n - 1, 0)
  console.log(`✓ all ${received.size} messages arrived (${duplicates} twice after the kill: at-least-once); ${badSignatures} bad signatures`)

  b.child.kill('SIGTERM')
  await new Promise((resolve) => b.child.once('exit', resolve))
  await redis.stop()
  receiver.close()
  clearTimeout(deadline)
  process.exit(badSignatures === 0 ? 0 : 1)
}
