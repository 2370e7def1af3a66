/**
 * A loopback collector stand-in for the runtime tests: records every request (method, path,
 * query, headers, parsed body) and answers `/v1/batch` with 200 and CORS headers, so a page on
 * another origin can post to it. It never validates: the tests assert on what arrived.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface SunkRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  raw: string
  body: SunkBody | undefined
}

export interface SunkBody {
  batch: Array<{ type: string; messageId: string; event?: string; userId?: string; properties?: Record<string, unknown>; context?: Record<string, unknown> }>
  sentAt: string
  writeKey?: string
  context?: { library?: { name: string; version: string } }
}

export interface Sink {
  /** `http://127.0.0.1:<port>` */
  url: string
  requests: SunkRequest[]
  /** POSTs to `…/v1/batch` (any prefix: an endpoint may have a path). */
  batches(): SunkRequest[]
  /** Every message received, in arrival order. */
  messages(): SunkBody['batch']
  /** Resolves once `count` messages (optionally: those matching `filter`) have arrived. */
  waitForMessages(count: number, timeoutMs?: number, filter?: (m: SunkBody['batch'][number]) => boolean): Promise<SunkBody['batch']>
  close(): Promise<void>
}

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'content-type, authorization, content-encoding',
  'access-control-max-age': '0',
}

export async function startSink(): Promise<Sink> {
  const requests: SunkRequest[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1')
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: SunkBody | undefined
      try {
        body = raw ? (JSON.parse(raw) as SunkBody) : undefined
      } catch {
        body = undefined
      }
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, raw, body })
      if (req.method === 'OPTIONS') {
        res.writeHead(204, CORS).end()
        return
      }
      const ok = url.pathname.endsWith('/v1/batch')
      res.writeHead(ok ? 200 : 404, { ...CORS, 'content-type': 'application/json' })
      res.end(JSON.stringify({ success: ok }))
    })
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const batches = () => requests.filter((r) => r.method === 'POST' && r.path.endsWith('/v1/batch'))
  const messages = () => batches().flatMap((r) => r.body?.batch ?? [])
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    batches,
    messages,
    async waitForMessages(count, timeoutMs = 20_000, filter = () => true) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const got = messages().filter(filter)
        if (got.length >= count) return got
        if (Date.now() > deadline) {
          throw new Error(`sink: expected ${count} messages within ${timeoutMs} ms, got ${got.length} (${requests.length} requests: ${requests.map((r) => `${r.method} ${r.path}`).join(', ')})`)
        }
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
