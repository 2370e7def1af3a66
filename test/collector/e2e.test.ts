/**
 * End to end over real sockets: a real Client → the collector's Node server → its Webhooks
 * destination → a loopback receiver that verifies every X-Signature over the raw body.
 */
import { createServer } from 'node:http'
import { describe, expect, it, vi } from 'vitest'
import { createCollector, startServer } from '../../src/collector/index.js'
import { Client } from '../../src/index.js'
import { verifySignature } from '../../src/webhooks/index.js'

const SECRET = 'pipeline-secret'

async function startReceiver() {
  const received: Array<{ payload: Record<string, any>; verified: boolean }> = []
  const waiters: Array<() => void> = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const raw = Buffer.concat(chunks)
      const verified = await verifySignature(raw, String(req.headers['x-signature'] ?? ''), SECRET)
      received.push({ payload: JSON.parse(raw.toString('utf8')), verified })
      res.statusCode = verified ? 200 : 401
      res.end()
      waiters.forEach((w) => w())
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}/events`,
    received,
    until: (n: number) => new Promise<void>((done) => {
      const check = () => received.length >= n && done()
      waiters.push(check)
      check()
    }),
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

describe('client → collector → destination → receiver', () => {
  it('delivers every call type, a deletion and an audience sync, all signed', async () => {
    const receiver = await startReceiver()
    const collector = createCollector({
      sources: [{ writeKey: 'KEY', name: 'web', webhooks: { enabled: true, urls: [{ url: receiver.url }], sharedSecret: SECRET } }],
      adminToken: 'admin-token-for-e2e-tests',
    })
    const server = await startServer(collector, { port: 0 })
    const client = new Client('KEY', { endpoint: server.url, flushAt: 10 })
    try {
      const sent = [
        client.identify({ userId: 'u1', traits: { plan: 'pro' } }),
        client.track({ userId: 'u1', event: 'Order Completed', properties: { total: 30 } }),
        client.page({ userId: 'u1', name: 'Home', properties: { path: '/' } }),
        client.screen({ userId: 'u1', name: 'Settings' }),
        client.group({ userId: 'u1', groupId: 'g1', traits: { 'Company Name': 'ACME' } }),
        client.alias({ userId: 'u1', previousId: 'anon-1' }),
      ]
      expect(await client.flush()).toEqual({ delivered: 6, failed: 0 })
      const admin = (path: string, body: unknown) =>
        fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: 'Bearer admin-token-for-e2e-tests' }, body: JSON.stringify(body) })
      expect((await admin('/v1/deletions', { userId: 'u9' })).status).toBe(200)
      expect((await admin('/v1/audiences', { source: 'web', audience: 'Big Spenders', members: ['u1', 'u2'] })).status).toBe(200)
      await receiver.until(9)
      expect(receiver.received.every((r) => r.verified)).toBe(true)
      const byMessageId = new Map(receiver.received.map((r) => [r.payload.messageId, r.payload]))
      for (const message of sent) {
        expect(byMessageId.get(message.messageId)).toMatchObject({ version: 1, type: message.type, timestamp: message.timestamp })
      }
      expect(byMessageId.get(sent[5].messageId)).toMatchObject({ 'Previous ID': 'anon-1', 'User ID': 'u1' })
      expect(receiver.received.filter((r) => r.payload.type === 'delete').map((r) => r.payload)).toMatchObject([{ userId: 'u9' }])
      const audience = receiver.received.filter((r) => r.payload.traits?.big_spenders === true).map((r) => r.payload.userId)
      expect(audience.sort()).toEqual(['u1', 'u2'])
      await vi.waitFor(() => expect(collector.stats()).toMatchObject({ received: 6, forwarded: 9, failed: 0, pending: 0 }))
    } finally {
      await client.close()
      await server.close()
      expect((await collector.close()).drained).toBe(true)
      await receiver.close()
    }
  })
})
