/**
 * Shared setup of the console endpoint tests: a collector with an admin token and two sources
 * ("web" forwards, signed, to a recording fetch; "app" does not), and admin requests to it.
 * Call `afterEach(closeCollectors)` in each test file.
 */
import { createCollector, type Collector, type CollectorConfig } from '../../../src/collector/index.js'
import { KEY, recordingFetch } from '../helpers.js'

export const TOKEN = 'admin-token-for-tests'
export const SECRET = 'a-long-shared-secret-7890'
/** The collectors a test made, closed by `closeCollectors`. */
export const collectors: Collector[] = []

export async function closeCollectors(): Promise<void> {
  await Promise.all(collectors.splice(0).map((c) => c.close(0)))
}

export function consoleCollector(overrides: Partial<CollectorConfig> = {}, respond?: Parameters<typeof recordingFetch>[0]) {
  const receiver = recordingFetch(respond)
  const collector = createCollector({
    sources: [
      { writeKey: KEY, name: 'web', webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in' }], sharedSecret: SECRET } },
      { writeKey: 'OTHER', name: 'app' },
    ],
    adminToken: TOKEN,
    fetch: receiver.fetch,
    ...overrides,
  })
  collectors.push(collector)
  return { collector, calls: receiver.calls }
}

export function admin(path: string, init: { method?: string; body?: unknown; token?: string; headers?: Record<string, string> } = {}): Request {
  return new Request(`http://collector.test${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${init.token ?? TOKEN}`, 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  })
}

export async function json(collector: Collector, request: Request): Promise<{ status: number; body: any }> {
  const response = await collector.fetch(request)
  return { status: response.status, body: await response.json() }
}
