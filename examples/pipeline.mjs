/**
 * `npm start`: the whole system on this machine, with no set-up.
 *
 *   Client ──POST /v1/batch──▶ collector (Node server) ──webhook──▶ receiver (verifies X-Signature)
 *
 * Starts the collector and a webhook receiver on loopback, sends each of the six calls through a
 * real Client, requests a deletion and syncs an audience twice through the admin endpoints, then
 * prints what the receiver got. Exits 0 only if every payload arrived with a valid signature.
 */
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import { Client } from 'isomorphic-analytics'
import { createCollector, startServer } from 'isomorphic-analytics/collector'
import { verifySignature } from 'isomorphic-analytics/webhooks'

const OVERALL_TIMEOUT_MS = 20_000
const secret = randomBytes(16).toString('hex')
const writeKey = `wk_${randomBytes(8).toString('hex')}`
const adminToken = randomBytes(16).toString('hex')

const deadline = setTimeout(() => {
  console.error(`\n✗ Pipeline did not complete within ${OVERALL_TIMEOUT_MS / 1000} s.`)
  process.exit(1)
}, OVERALL_TIMEOUT_MS)

/** A webhook receiver that checks each request's X-Signature over the raw body it received. */
async function startReceiver() {
  const received = []
  let notify = () => {}
  const server = createServer((req, res) => {
    const chunks = []
    req.on('data', (chunk) => chunks.push(chunk))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks)
      const signature = req.headers['x-signature']
      const verified = typeof signature === 'string' && (await verifySignature(raw, signature, secret))
      let payload
      try {
        payload = JSON.parse(raw.toString('utf8'))
      } catch {
        payload = { type: '(not JSON)' }
      }
      received.push({ payload, verified, userAgent: req.headers['user-agent'] })
      res.statusCode = verified ? 200 : 401
      res.end()
      notify()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}/webhook`,
    received,
    /** Resolves once `count` requests arrived, or after `ms` (whichever first). */
    waitFor: (count, ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(resolve, ms)
        notify = () => received.length >= count && (clearTimeout(timer), resolve())
        notify()
      }),
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

function summary(payload) {
  const { type, userId } = payload
  const detail = {
    identify: () => `traits=${JSON.stringify(payload.traits)}`,
    track: () => `event=${JSON.stringify(payload.event)} properties=${JSON.stringify(payload.properties)}`,
    page: () => `name=${JSON.stringify(payload.name)} properties=${JSON.stringify(payload.properties)}`,
    screen: () => `name=${JSON.stringify(payload.name)}`,
    group: () => `groupId=${JSON.stringify(payload.groupId)} traits=${JSON.stringify(payload.traits)}`,
    alias: () => `previousId=${JSON.stringify(payload.previousId)}`,
    delete: () => `timestamp=${payload.timestamp}`,
  }[type]
  return `${String(type).padEnd(8)} userId=${JSON.stringify(userId)}  ${detail ? detail() : ''}`
}

async function main() {
  const receiver = await startReceiver()
  const collector = createCollector({
    sources: [{ writeKey, name: 'web', webhooks: { enabled: true, urls: [{ url: receiver.url }], sharedSecret: secret } }],
    adminToken,
    drainTimeout: 5_000,
  })
  const server = await startServer(collector, { port: 0 })
  console.log('isomorphic-analytics: the whole pipeline on loopback\n')
  console.log(`  collector  ${server.url}  (source "web")`)
  console.log(`  receiver   ${receiver.url}  (verifies X-Signature, HMAC-SHA1)\n`)

  const client = new Client(writeKey, { endpoint: server.url, flushAt: 20 })
  const sent = [
    client.identify({ userId: 'user-1', traits: { name: 'Ada', plan: 'pro' } }),
    client.track({ userId: 'user-1', event: 'Order Completed', properties: { total: 42.5, currency: 'EUR' } }),
    client.page({ userId: 'user-1', name: 'Pricing', properties: { path: '/pricing', title: 'Pricing', url: 'https://example.com/pricing' } }),
    client.screen({ userId: 'user-1', name: 'Settings' }),
    client.group({ userId: 'user-1', groupId: 'acme', traits: { 'Company Name': 'ACME', employees: 120 } }),
    client.alias({ userId: 'user-1', previousId: 'anon-7f3' }),
  ]
  const flushed = await client.flush()
  console.log(`Client sent ${sent.map((m) => m.type).join(', ')}: ${flushed.delivered} delivered, ${flushed.failed} failed.`)

  const admin = async (path, body) => {
    const response = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`)
    return response.json()
  }
  await admin('/v1/deletions', { userId: 'user-gone' })
  await admin('/v1/audiences', { source: 'web', audience: 'Power Users', members: ['user-1', 'user-2'] })
  await admin('/v1/audiences', { source: 'web', audience: 'Power Users', members: ['user-2', 'user-3'] })
  console.log('Admin: deletion requested for "user-gone"; audience "Power Users" synced twice.\n')

  // 6 calls + 1 delete + 2 (first sync: both members) + 2 (second sync: user-1 out, user-3 in).
  const expected = 11
  await receiver.waitFor(expected, 10_000)
  console.log(`Receiver got ${receiver.received.length} requests:`)
  for (const { payload, verified } of receiver.received) {
    console.log(`  ${verified ? '✓' : '✗'} ${summary(payload)}  ${verified ? 'signature verified' : 'SIGNATURE INVALID'}`)
  }

  const problems = []
  const arrived = new Map(receiver.received.map((r) => [r.payload.messageId, r.payload]))
  for (const message of sent) if (!arrived.has(message.messageId)) problems.push(`${message.type} ${message.messageId} did not arrive`)
  if (!receiver.received.some((r) => r.payload.type === 'delete' && r.payload.userId === 'user-gone')) problems.push('the delete payload did not arrive')
  const audience = receiver.received
    .filter((r) => r.payload.type === 'identify' && r.payload.traits && 'power_users' in r.payload.traits)
    .map((r) => `${r.payload.userId}=${r.payload.traits.power_users}`)
    .sort()
  const wanted = ['user-1=false', 'user-1=true', 'user-2=true', 'user-3=true']
  if (audience.join() !== wanted.join()) problems.push(`audience payloads were [${audience}], expected [${wanted}]`)
  if (flushed.failed > 0 || flushed.delivered !== sent.length) problems.push(`the client flush reported ${JSON.stringify(flushed)}`)
  if (receiver.received.length !== expected) problems.push(`the receiver got ${receiver.received.length} requests, expected ${expected}`)
  const unverified = receiver.received.filter((r) => !r.verified).length
  if (unverified > 0) problems.push(`${unverified} signature(s) did not verify`)

  await client.close()
  await server.close()
  const report = await collector.close()
  await receiver.close()
  clearTimeout(deadline)
  const { received, forwarded, failed } = report.stats
  console.log(`\nCollector: ${received} messages received, ${forwarded} payloads forwarded, ${failed} failed.`)
  if (problems.length > 0) {
    console.error(`\n✗ Pipeline incomplete:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    return 1
  }
  console.log(`\n✓ All ${expected} payloads arrived and every signature verified.`)
  return 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`\n✗ Pipeline failed: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  },
)
