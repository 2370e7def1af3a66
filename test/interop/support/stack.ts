/**
 * A real collector on a loopback port, forwarding (signed) to a real loopback webhook receiver
 * that verifies every signature over the raw bytes it got, for the interop tests with
 * third-party SDKs. A thin front records each request the SDK made and can answer the first few
 * ingest requests 503, to drive the SDK's retries.
 */
import { loadExactJson, parseExact } from '../../../src/message/exact-json.js'
import { createCollector, nodeFetch, startServer, type Collector, type CollectorServer } from '../../../src/collector/index.js'
import { startSigningReceiver, type ReceivedPayload } from '../../helpers/signing-receiver.js'
import { until } from '../../helpers/until.js'

export const WRITE_KEY = 'interop-write-key'
const SECRET = 'interop-secret'

/** One forwarded payload as the receiver got it. */
export interface Forwarded extends ReceivedPayload {
  payload: Record<string, unknown>
}

/** One request an SDK made to the collector, and how it was answered. */
export interface SeenRequest {
  method: string
  path: string
  contentType: string | null
  contentEncoding: string | null
  status: number
}

export interface Stack {
  /** `http://127.0.0.1:port` of the collector. */
  url: string
  collector: Collector
  forwarded: Forwarded[]
  requests: SeenRequest[]
  /** Answers the next `count` ingest requests (not preflights, not /v1/m) with 503. */
  fail(count: number): void
  /** Resolves once `count` payloads have been forwarded and the collector has nothing pending. */
  waitForForwarded(count: number, timeoutMs?: number): Promise<Forwarded[]>
  close(): Promise<void>
}

export async function startStack(): Promise<Stack> {
  await loadExactJson()
  const requests: SeenRequest[] = []
  const receiver = await startSigningReceiver({ secret: SECRET })
  // What the receiver accepted, each parsed once (exactly: int64 digits kept).
  const forwarded: Forwarded[] = []
  const sync = () => {
    for (const received of receiver.accepted.slice(forwarded.length)) {
      forwarded.push({ ...received, payload: parseExact(received.raw).value as Record<string, unknown> })
    }
    return forwarded
  }
  const collector = createCollector({
    sources: [{ writeKey: WRITE_KEY, name: 'interop', webhooks: { enabled: true, urls: [{ url: receiver.url }], sharedSecret: SECRET } }],
    fetch: nodeFetch,
  })
  let failures = 0
  const front = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname
    const ingest = request.method === 'POST' && path !== '/v1/m'
    let response: Response
    if (ingest && failures > 0) {
      failures--
      await request.body?.cancel()
      response = new Response('{"success":false}', { status: 503, headers: { 'access-control-allow-origin': request.headers.get('origin') ?? '*' } })
    } else {
      response = await collector.fetch(request)
    }
    requests.push({
      method: request.method,
      path,
      contentType: request.headers.get('content-type'),
      contentEncoding: request.headers.get('content-encoding'),
      status: response.status,
    })
    return response
  }
  const server: CollectorServer = await startServer(front, { port: 0, host: '127.0.0.1' })
  return {
    url: server.url,
    collector,
    get forwarded() {
      return sync()
    },
    requests,
    fail: (count) => void (failures = count),
    async waitForForwarded(count, timeoutMs = 15_000) {
      await until(() => sync().length >= count && collector.stats().pending === 0, `${count} payloads forwarded`, timeoutMs, {
        progress: () => `${forwarded.length}; stats ${JSON.stringify(collector.stats())}; requests:\n  ${requests.map((r) => `${r.method} ${r.path} → ${r.status}`).join('\n  ')}`,
      })
      return forwarded
    },
    async close() {
      await server.close(1_000)
      await collector.close(1_000)
      await receiver.close()
    },
  }
}

export const INT64_MAX = '9223372036854775807'

/**
 * The checks every interop test makes: each expected message forwarded exactly once (by
 * `messageId`, or by a property `n` when the SDK picks the ids), every signature valid, and the
 * int64 digits in the raw forwarded bytes.
 */
export function byProperty(forwarded: Forwarded[], name: string): Map<unknown, Forwarded[]> {
  const groups = new Map<unknown, Forwarded[]>()
  for (const entry of forwarded) {
    const properties = (entry.payload.properties ?? entry.payload.traits) as Record<string, unknown> | undefined
    const key = properties?.[name]
    groups.set(key, [...(groups.get(key) ?? []), entry])
  }
  return groups
}
