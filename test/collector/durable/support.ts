/**
 * What the durable-mode tests share: collectors in child processes (`collector-process.mjs`, on
 * the built `dist/`), a real loopback receiver that verifies signatures, and polling helpers.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { QUEUE_NAME } from '../../../src/collector/delivery/bullmq-queue.js'
import { bullmqQueue, loadBullmq, loadPg, loadRedis } from '../../../src/collector/state/drivers.js'
import type { QueueServerProcess } from '../../helpers/queue-servers.js'
import { startSigningReceiver, type ReceivedPayload } from '../../helpers/signing-receiver.js'
import { until as waitUntil } from '../../helpers/until.js'

const CHILD = fileURLToPath(new URL('./collector-process.mjs', import.meta.url))
export const SECRET = 'durable-secret'

export interface Received extends ReceivedPayload {
  messageId: string
}

/**
 * The signing receiver (test/helpers/) answering `status(payload)` after `delayMs(payload)`, with
 * a `Retry-After` of `retryAfter(payload)` seconds if any, each payload's messageId read; `open`:
 * requests not answered yet whose sender is still connected.
 */
export async function startReceiver(
  status: (payload: Received) => number,
  delayMs: (payload: Received) => number = () => 0,
  retryAfter: (payload: Received) => number | undefined = () => undefined,
) {
  const read = new WeakMap<ReceivedPayload, Received>()
  const withId = (r: ReceivedPayload): Received => {
    let received = read.get(r)
    if (!received) read.set(r, (received = { ...r, messageId: (JSON.parse(r.raw) as { messageId?: string }).messageId ?? '' }))
    return received
  }
  const receiver = await startSigningReceiver({
    secret: SECRET,
    status: (p) => status(withId(p)),
    delayMs: (p) => delayMs(withId(p)),
    retryAfter: (p) => retryAfter(withId(p)),
  })
  return {
    url: receiver.url,
    get open() {
      return receiver.open
    },
    get accepted() {
      return receiver.accepted.map(withId)
    },
    get attempts() {
      return receiver.attempts.map(withId)
    },
    close: receiver.close,
  }
}

export interface CollectorProcess {
  child: ChildProcess
  url: string
  /** Resolves with the last JSON line it printed once it has exited, and when. */
  exited: Promise<{ code: number | null; signal: string | null; at: number; last: unknown }>
  /** What it wrote to stderr so far (also passed on to this process's stderr). */
  stderr(): string
  stats(): Promise<Record<string, number>>
  /** The bytes its heap holds after a garbage collection. */
  heap(): Promise<number>
  /** Its own counts (`collector.stats()`: what this process did), not the shared ones. */
  localStats(): Promise<Record<string, number>>
}

export async function startCollector(env: Record<string, string>): Promise<CollectorProcess> {
  const child = spawn(process.execPath, [CHILD], { env: { ...process.env, SECRET, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
    process.stderr.write(chunk)
  })
  const lines = createInterface({ input: child.stdout! })
  let last: unknown
  const heaps: Array<(bytes: number) => void> = []
  const locals: Array<(stats: Record<string, number>) => void> = []
  const port = new Promise<number>((resolve, reject) => {
    lines.on('line', (line) => {
      last = JSON.parse(line)
      if (typeof (last as { port?: number }).port === 'number') resolve((last as { port: number }).port)
      if (typeof (last as { heap?: number }).heap === 'number') heaps.shift()?.((last as { heap: number }).heap)
      if (typeof (last as { local?: object }).local === 'object') locals.shift()?.((last as { local: Record<string, number> }).local)
    })
    child.once('exit', () => reject(new Error('collector process exited before listening')))
  })
  const exited = new Promise<{ code: number | null; signal: string | null; at: number; last: unknown }>((resolve) => {
    child.once('exit', (code, signal) => setImmediate(() => resolve({ code, signal, at: Date.now(), last })))
  })
  const url = `http://127.0.0.1:${await port}`
  return {
    child,
    url,
    exited,
    stderr: () => stderr,
    async stats() {
      const response = await fetch(`${url}/v1/stats`, { headers: { authorization: 'Bearer admin-token-for-tests' } })
      return (await response.json()) as Record<string, number>
    },
    localStats() {
      const stats = new Promise<Record<string, number>>((resolve) => locals.push(resolve))
      child.kill('SIGHUP')
      return stats
    },
    heap() {
      const heap = new Promise<number>((resolve) => heaps.push(resolve))
      child.kill('SIGUSR2')
      return heap
    },
  }
}

/** A batch of `count` track calls, `m-<from>`…; each carries an int64 beyond 2^53 as digits. */
export function batchText(from: number, count: number): string {
  const events = Array.from({ length: count }, (_, i) => (
    `{"type":"track","event":"Order Completed","userId":"u-${from + i}","messageId":"m-${from + i}","properties":{"total":9223372036854775807}}`
  ))
  return `{"batch":[${events.join(',')}]}`
}

/** POSTs `body` to the collector at `url` with the test source's write key; the response, unread. */
export function post(url: string, body: string, path = '/v1/batch'): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
    body,
  })
}

export async function send(url: string, body: string, path = '/v1/batch'): Promise<number> {
  const response = await post(url, body, path)
  await response.arrayBuffer()
  return response.status
}

export async function admin(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer admin-token-for-tests' },
    body: JSON.stringify(body),
  })
}

/**
 * The settled marks `batch` jobs left in the queue server (dropped once each job completed; see
 * src/collector/state/shared-state.ts), read straight from the server.
 */
export function settledMarks(url: string): Promise<number> {
  return askServer(url,
    async (redis) => (await redis.keys('isomorphic-analytics:settled:*')).length,
    async (client) => Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM isomorphic_analytics_settled')).rows[0].n))
}

/**
 * Drops the console settings saved in the server at `url` (../../../src/collector/state/shared-settings.ts)
 * and the counts of the payloads kept for replay in the jobs the queue's obliteration dropped
 * (../../../src/collector/replay/kept-jobs.ts).
 */
function forgetSettings(url: string): Promise<void> {
  return askServer(url,
    async (redis) => void (await redis.del('isomorphic-analytics:settings', ...(await redis.keys('isomorphic-analytics:kept-count:*')))),
    // Created by the first process that opens them: a later one creates them again.
    async (client) => void (await client.query('DROP TABLE IF EXISTS isomorphic_analytics_settings, isomorphic_analytics_kept_counts')))
}

type RedisClient = InstanceType<Awaited<ReturnType<typeof loadRedis>>>
type PgClient = InstanceType<Awaited<ReturnType<typeof loadPg>>['Client']>

/** Runs `redis` or `pg` (by `url`'s kind) with a client of the server at `url`, closed after. */
async function askServer<T>(url: string, redis: (client: RedisClient) => Promise<T>, pg: (client: PgClient) => Promise<T>): Promise<T> {
  if (url.startsWith('redis')) {
    const client = new (await loadRedis())(url)
    try {
      return await redis(client)
    } finally {
      client.disconnect()
    }
  }
  const client = new (await loadPg()).Client({ connectionString: url })
  await client.connect()
  try {
    return await pg(client)
  } finally {
    await client.end()
  }
}

/**
 * The retries (`deliver` jobs) of the message `messageId` waiting in the queue server for their
 * time, read with BullMQ as a collector reads them.
 */
export async function waitingRetries(url: string, messageId: string): Promise<number> {
  const ours = (job: { name: string; data: { b?: string } }) => job.name === 'deliver' && (JSON.parse(job.data.b ?? '{}') as { messageId?: string }).messageId === messageId
  return withQueue(url, async (queue) => (await queue.getDelayed()).filter(ours).length)
}

/**
 * Adds to the server at `url` a retry of a `track` to source `web` (what a collector adds after a
 * failed attempt): its first attempt at `firstAt`, due at `dueAt` (ms since the epoch).
 */
export async function addRetry(url: string, messageId: string, firstAt: number, dueAt: number): Promise<void> {
  const b = JSON.stringify({ type: 'track', event: 'Order Completed', userId: 'u', messageId })
  await withQueue(url, (queue) => queue.add('deliver', { s: 'web', t: 'track', b, n: 1, f: firstAt, d: dueAt }, { jobId: `test-${messageId}`, delay: Math.max(0, dueAt - Date.now()), removeOnComplete: true, removeOnFail: 1000 }))
}

/** Runs `fn` with the collectors' BullMQ queue on the server at `url`, opened as a collector opens it. */
async function withQueue<T>(url: string, fn: (queue: import('bullmq').Queue) => Promise<T>): Promise<T> {
  const server = { kind: url.startsWith('redis') ? 'redis' : 'postgres', url } as const
  const queue = bullmqQueue(await loadBullmq(server), server, QUEUE_NAME)
  try {
    return await fn(queue)
  } finally {
    await queue.close()
  }
}

/** The jobs in the server at `url`, of every state (what `retention: 0` leaves: none). */
export async function jobsLeft(url: string): Promise<number> {
  const counts = await withQueue(url, (queue) => queue.getJobCounts('active', 'wait', 'delayed', 'completed', 'failed', 'prioritized'))
  return Object.values(counts).reduce((sum, n) => sum + n, 0)
}

/** The suite's `until` (../../helpers/until.ts): checks that ask the queue server, every 50 ms, 30 s at most. */
export const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000, progress?: () => unknown): Promise<void> =>
  waitUntil(check, what, timeoutMs, { intervalMs: 50, progress })

export function stop(collector: CollectorProcess, signal: NodeJS.Signals = 'SIGTERM') {
  if (collector.child.exitCode === null && collector.child.signalCode === null) collector.child.kill(signal)
  return collector.exited
}

/**
 * A suite's real queue server (started before its tests, stopped after) and the collector
 * processes its tests start on it. Every process on the server takes jobs and delivers with its
 * own configuration, so none may outlive its test: each is SIGKILLed after it, and the jobs the
 * test left are removed (`obliterate`).
 */
export function onQueueServer(start: () => Promise<QueueServerProcess>): { readonly url: string; collector(env: Record<string, string>): Promise<CollectorProcess> } {
  let server: QueueServerProcess | undefined
  const running: CollectorProcess[] = []
  beforeAll(async () => {
    server = await start()
  }, 60_000)
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => stop(c, 'SIGKILL')))
    // What a test left in the server (a failed one's backlog) is not the next test's to deliver.
    await withQueue(server!.url, (queue) => queue.obliterate({ force: true }))
    // Nor are the settings it saved through a console (every process loads them at start, over its config's).
    await forgetSettings(server!.url)
  })
  afterAll(async () => {
    await server?.stop()
  })
  return {
    get url() {
      return server!.url
    },
    async collector(env) {
      const c = await startCollector({ QUEUE: server!.url, ...env })
      running.push(c)
      return c
    },
  }
}
