// Quick start: a real Client sends a handful of calls to a loopback receiver, which prints them.
// Run with `npm run build && node examples/quick-start.mjs` (`npm start` runs examples/pipeline.mjs).
import { createServer } from 'node:http'
import { Client } from 'isomorphic-analytics'

const received = []
const receiver = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => (body += chunk))
  req.on('end', () => {
    const { batch } = JSON.parse(body)
    received.push(...batch)
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
  })
})
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${receiver.address().port}`

const client = new Client('QUICK_START_KEY', { endpoint })
client.on('error', (error) => console.error('not delivered:', error.message))

client.identify({ userId: 'user-1', traits: { name: 'Ada Lovelace', plan: 'pro' } })
client.track({ userId: 'user-1', event: 'Order Completed', properties: { total: 42.5, currency: 'EUR' } })
client.page({ userId: 'user-1', name: 'Pricing', properties: { path: '/pricing' } })
client.screen({ userId: 'user-1', name: 'Settings' })
client.group({ userId: 'user-1', groupId: 'acme', traits: { employees: 120 } })
client.alias({ userId: 'user-1', previousId: 'anon-7' })

const { delivered, failed } = await client.close()
console.log(`sent ${delivered + failed} calls to ${endpoint}/v1/batch: ${delivered} delivered, ${failed} failed`)
for (const m of received) {
  const who = m.userId ?? m.anonymousId
  const what = m.event ?? m.name ?? m.groupId ?? m.previousId ?? ''
  console.log(`  ${m.type.padEnd(8)} ${who.padEnd(7)} ${String(what).padEnd(16)} ${m.messageId}`)
}
receiver.close()
process.exitCode = received.length === 6 && failed === 0 ? 0 : 1
