// A webhook receiver on Node's own http module. It verifies X-Signature over the raw bytes of the
// body, exactly as they arrived, and only then parses them.
//
//   In your project: save it as receiver.mjs, then
//   WEBHOOK_SECRET=<SHARED_SECRET> PORT=3000 node receiver.mjs
//   In this repository: npm run build, then the same with examples/webhook-receiver-node.mjs.
import { createServer } from 'node:http'
import { verifySignature } from 'isomorphic-analytics/webhooks'

const secret = process.env.WEBHOOK_SECRET
if (!secret) throw new Error('Set WEBHOOK_SECRET to the destination’s shared secret.')
const MAX_BODY_BYTES = 1_000_000

function reply(res, status, body) {
  res.writeHead(status, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify(body))
}

const server = createServer(async (req, res) => {
  if (req.method !== 'POST') return reply(res, 405, { error: 'POST only' })

  // 1. Keep the raw body: a Buffer of the bytes received, not a parsed-and-restringified copy.
  const chunks = []
  let size = 0
  for await (const chunk of req) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) return reply(res, 413, { error: 'Body too large' })
    chunks.push(chunk)
  }
  const raw = Buffer.concat(chunks)

  // 2. Verify the signature over those bytes (constant-time; false for a missing header).
  if (!(await verifySignature(raw, req.headers['x-signature'], secret))) {
    return reply(res, 401, { error: 'Bad signature' })
  }

  // 3. Only now parse. The payload is a WebhookPayload: switch on payload.type.
  let payload
  try {
    payload = JSON.parse(raw.toString('utf8'))
  } catch {
    return reply(res, 400, { error: 'Invalid JSON' })
  }
  console.log(`received ${payload.type} from ${payload.userId ?? payload.anonymousId}`)

  // 4. Answer 2xx within 5 seconds; a 5xx or a timeout makes the sender retry.
  reply(res, 200, { ok: true })
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`Listening on http://127.0.0.1:${server.address().port}/`)
})
