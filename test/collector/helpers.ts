/** Shared helpers of the collector tests: requests, a recording webhook fetch, collectors. */
import { createCollector, type CollectorConfig } from '../../src/collector/index.js'

export const KEY = 'KEY'
export const basic = (key: string) => `Basic ${btoa(`${key}:`)}`

export interface PostOptions {
  key?: string | null
  path?: string
  method?: string
  headers?: Record<string, string>
}

/** A request to the collector: JSON body, Basic auth with `KEY` unless `key: null`. */
export function post(body: unknown, options: PostOptions = {}): Request {
  const { key = KEY, path = '/v1/batch', method = 'POST', headers = {} } = options
  const init: RequestInit = {
    method,
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { authorization: basic(key) }),
      ...headers,
    },
  }
  if (method !== 'GET' && method !== 'HEAD') init.body = typeof body === 'string' ? body : JSON.stringify(body)
  return new Request(`http://collector.test${path}`, init)
}

export const track = (extra: Record<string, unknown> = {}) => ({
  type: 'track',
  event: 'Signed Up',
  userId: 'u1',
  messageId: 'm-1',
  timestamp: '2026-11-22T10:00:00.000Z',
  ...extra,
})

export interface Delivered {
  url: string
  headers: Record<string, string>
  body: string
  json: Record<string, unknown>
}

/** A fetch for the webhook destinations that records each request and answers from `respond`. */
export function recordingFetch(respond: (call: Delivered, n: number) => Response | Promise<Response> = () => new Response('ok')) {
  const calls: Delivered[] = []
  const fetch = async (url: string, init?: RequestInit) => {
    const call: Delivered = {
      url,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: String(init?.body),
      json: JSON.parse(String(init?.body)) as Record<string, unknown>,
    }
    calls.push(call)
    return respond(call, calls.length)
  }
  return { fetch, calls }
}

/** A collector with one source `web` (key `KEY`) forwarding to `https://hooks.test/in`. */
export function forwardingCollector(overrides: Partial<CollectorConfig> = {}, respond?: Parameters<typeof recordingFetch>[0]) {
  const receiver = recordingFetch(respond)
  const collector = createCollector({
    sources: [{ writeKey: KEY, name: 'web', webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }], sharedSecret: 'shh' } }],
    fetch: receiver.fetch,
    ...overrides,
  })
  return { collector, calls: receiver.calls }
}

export { until } from '../helpers/until.js'
