/**
 * What a durable collector's `close()` leaves running, in a library user's process (no CLI, no
 * `process.exit`: library-process.mjs on the built dist/): nothing, once it resolved, whether its
 * queue server was never reached, went away mid-run or stopped answering, Redis and PostgreSQL
 * alike (a PostgreSQL server frozen with SIGSTOP: it accepts connections, answers nothing). And
 * what its log says of a drain that timed out: how many attempts in flight were stopped, or that
 * none was.
 * Real redis-server and PostgreSQL; `npx tsup` first.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { loadRedis } from '../../../src/collector/state/drivers.js'
import { freePort, startPostgres, startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { batchText, SECRET, startReceiver, until, waitingRetries } from './support.js'

const CHILD = fileURLToPath(new URL('./library-process.mjs', import.meta.url))
const DRAIN = 1_000
/** From `close()` called to the process gone: the drain timeout plus 2 s. */
const BOUND = DRAIN + 2_000

interface LibraryProcess {
  /** Debug lines and reported errors (stderr) so far. */
  log: string[]
  /** What `close()` resolved with, once it did. */
  readonly report: Record<string, unknown> | undefined
  /** Whether the process has ended (before `close()`: it crashed). */
  readonly exited: boolean
  send(body: string): Promise<number>
  /**
   * Calls `close()`; resolves once the process has ended on its own, or with `ended: false` once
   * `BOUND` has passed (it is killed then), and how long after the call. `closed`: whether
   * `close()` resolved.
   */
  close(): Promise<{ ended: boolean; code: number | null; closed: boolean; afterMs: number }>
}

const running: ChildProcess[] = []
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** `closeAtOnce`: the process calls `close()` right after `createCollector()` (no IPC). */
async function startLibraryProcess(env: Record<string, string>, { closeAtOnce = false } = {}): Promise<LibraryProcess> {
  const child = spawn(process.execPath, [CHILD], {
    env: { ...process.env, SECRET, DRAIN: String(DRAIN), ...env, ...(closeAtOnce && { CLOSE_AT_ONCE: '1' }) },
    stdio: ['ignore', 'pipe', 'pipe', ...(closeAtOnce ? [] : ['ipc' as const])],
  })
  running.push(child)
  const log: string[] = []
  createInterface({ input: child.stderr! }).on('line', (line) => log.push(line))
  const replies: Array<(message: Record<string, unknown>) => void> = []
  let closed = false
  let report: Record<string, unknown> | undefined
  // With `closeAtOnce`: when the process called close() (its clock is this one's), not when it
  // was spawned: starting Node and importing the collector can take over a second under load.
  let closeCalledAt: number | undefined
  const started = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const message = JSON.parse(line) as Record<string, unknown>
      if (message.started) {
        closeCalledAt = message.closeCalledAt as number | undefined
        resolve()
      }
      else if (message.closed) {
        closed = true
        report = message.closed as Record<string, unknown>
      }
      else replies.shift()?.(message)
    })
  })
  // 'close': after the exit and the end of its output (its last line read).
  const exit = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const gone = () => child.exitCode !== null || child.signalCode !== null
  await started
  return {
    log,
    get report() {
      return report
    },
    get exited() {
      return gone()
    },
    send(body) {
      const reply = new Promise<Record<string, unknown>>((resolve) => replies.push(resolve))
      child.send({ send: body })
      return reply.then((message) => message.status as number)
    },
    async close() {
      const calledAt = closeAtOnce ? closeCalledAt! : Date.now()
      if (gone()) return { ended: true, code: child.exitCode, closed, afterMs: Date.now() - calledAt }
      if (!closeAtOnce) child.send({ close: true })
      let timer: ReturnType<typeof setTimeout> | undefined
      const ended = await Promise.race([exit.then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), BOUND)))])
      clearTimeout(timer)
      const afterMs = Date.now() - calledAt
      if (!ended) child.kill('SIGKILL')
      return { ended, code: child.exitCode, closed, afterMs }
    },
  }
}

/** Closes the collector and expects its process to end on its own, after `close()` resolved, within `BOUND`. */
async function expectEndsOnItsOwn(collector: LibraryProcess): Promise<void> {
  const { ended, code, closed, afterMs } = await collector.close()
  expect({ ended, code, closed }).toEqual({ ended: true, code: 0, closed: true })
  expect(afterMs).toBeLessThan(BOUND)
}

/** A retry of `m-<id>` waiting in the server (its first attempt answered 503, Retry-After: 1 h): no attempt in flight. */
async function retryWaiting(server: QueueServerProcess, id: number): Promise<LibraryProcess> {
  const receiver = await startReceiver(() => 503, () => 0, () => 3_600)
  try {
    const collector = await startLibraryProcess({ QUEUE: server.url, WEBHOOK: receiver.url })
    expect(await collector.send(batchText(id, 1))).toBe(200)
    await until(async () => (await waitingRetries(server.url, `m-${id}`)) === 1, 'the retry in the queue server')
    return collector
  } finally {
    await receiver.close()
  }
}

describe('after close() resolves, nothing of a durable collector keeps the process alive', () => {
  it('a Redis queue server never reached (and its report says so)', async () => {
    const collector = await startLibraryProcess({ QUEUE: `redis://127.0.0.1:${await freePort()}` })
    // Long enough for every client to have failed and be waiting to reconnect.
    await until(() => collector.exited || collector.log.some((line) => line.includes('ECONNREFUSED')), 'a connection refused')
    await expectEndsOnItsOwn(collector)
    expect(collector.report).toMatchObject({ drained: true, stopped: 0, queueReached: false })
    expect(collector.log.some((line) => line.includes('closed: the queue server was not reached within 1000 ms; nothing was taken from it'))).toBe(true)
  })

  it('a Redis queue server never reached, closed at once (drain timeout 0): before BullMQ and the bus made their connections', async () => {
    const collector = await startLibraryProcess({ QUEUE: `redis://127.0.0.1:${await freePort()}`, DRAIN: '0' }, { closeAtOnce: true })
    await expectEndsOnItsOwn(collector)
  })

  it('a PostgreSQL queue server never reached', async () => {
    const collector = await startLibraryProcess({ QUEUE: `postgres://postgres@127.0.0.1:${await freePort()}/postgres` })
    await until(() => collector.exited || collector.log.some((line) => line.includes('ECONNREFUSED')), 'a connection refused')
    await expectEndsOnItsOwn(collector)
  })

  // Stopped, the server refuses connections (PostgreSQL's lines also check that the process does
  // not crash: an unhandled 'error' on a pool). Frozen (SIGSTOP), it accepts them and answers
  // nothing: queries wait, and so do connections being made and the ends of idle ones.
  const servers = { Redis: () => startRedis(), PostgreSQL: () => startPostgres() }
  it.each<[string, keyof typeof servers, number]>([
    ['stopped', 'Redis', 90_000],
    ['stopped', 'PostgreSQL', 90_100],
    ['frozen (accepts connections, never answers)', 'Redis', 90_300],
    ['frozen (accepts connections, never answers)', 'PostgreSQL', 90_200],
  ])('a queue server reached, then %s mid-run: %s', async (how, kind, first) => {
    const server = await servers[kind]()
    try {
      const collector = await retryWaiting(server, first)
      if (how === 'stopped') {
        await server.stop()
        await until(() => collector.exited || collector.log.some((line) => line.includes('ECONNREFUSED')), 'the server gone')
      } else {
        server.freeze(true)
        // Long enough for the counters' refresh (every 250 ms) and BullMQ's polls to be waiting on it.
        await pause(500)
      }
      await expectEndsOnItsOwn(collector)
      if (how === 'stopped') expect(collector.report).toMatchObject({ queueReached: true })
    } finally {
      await server.stop()
    }
  }, 60_000)

  it.each<[string, () => Promise<QueueServerProcess>]>([
    ['Redis', () => startRedis()],
    ['PostgreSQL', () => startPostgres()],
  ])('a %s queue server frozen before the collector started: no connection ever made ready', async (_name, start) => {
    const server = await start()
    try {
      server.freeze(true)
      const collector = await startLibraryProcess({ QUEUE: server.url })
      // Long enough for BullMQ, the counters and the bus to be waiting for their connections.
      await pause(500)
      await expectEndsOnItsOwn(collector)
    } finally {
      await server.stop()
    }
  }, 60_000)
})

describe('the CommonJS build (`require`)', () => {
  it('loads durable mode from its own file: a batch through Redis is delivered, and the process ends after close()', async () => {
    const server = await startRedis()
    const receiver = await startReceiver(() => 200)
    try {
      const collector = await startLibraryProcess({ QUEUE: server.url, WEBHOOK: receiver.url, COLLECTOR_MODULE: '../../../dist/collector.cjs' })
      expect(await collector.send(batchText(90_500, 1))).toBe(200)
      await until(() => receiver.accepted.some((r) => r.messageId === 'm-90500'), 'the delivery')
      await expectEndsOnItsOwn(collector)
      expect(collector.log.filter((line) => line.startsWith('onError'))).toEqual([])
    } finally {
      await receiver.close()
      await server.stop()
    }
  }, 60_000)
})

describe('a request waiting on the queue server when close() gives up on it', () => {
  it('PostgreSQL frozen: the request is answered 503 (the sender retries), and the dropped connections are not reported', async () => {
    const server = await startPostgres()
    const receiver = await startReceiver(() => 200)
    try {
      const collector = await startLibraryProcess({ QUEUE: server.url, WEBHOOK: receiver.url })
      expect(await collector.send(batchText(90_400, 1))).toBe(200)
      server.freeze(true)
      const waiting = collector.send(batchText(90_401, 1))
      await pause(300)
      await expectEndsOnItsOwn(collector)
      expect(await waiting).toBe(503)
      expect(collector.log.filter((line) => line.startsWith('onError'))).toEqual([])
    } finally {
      await receiver.close()
      await server.stop()
    }
  }, 60_000)
})

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('a durable shutdown whose drain timed out logs what happened', () => {
  it('attempts in flight: how many were stopped (their requests aborted)', async () => {
    const redis = await startRedis()
    const receiver = await startReceiver(() => 200, () => 60_000)
    try {
      const collector = await startLibraryProcess({ QUEUE: redis.url, WEBHOOK: receiver.url, CONCURRENCY: '2' })
      expect(await collector.send(batchText(91_000, 1))).toBe(200)
      expect(await collector.send(batchText(91_001, 1))).toBe(200)
      await until(() => receiver.open === 2, 'two attempts held open by the receiver')
      await expectEndsOnItsOwn(collector)
      expect(collector.log).toContainEqual(closedLine(`2 attempts still in flight after ${DRAIN} ms were stopped; they stay in the queue server with the queued deliveries`))
      // close() reports them too (`stopped`), as the CLI says.
      expect(collector.report).toMatchObject({ drained: false, pending: 0, stopped: 2 })
      expect(receiver.open).toBe(0)
    } finally {
      await receiver.close()
      await redis.stop()
    }
  }, 30_000)

  it('no attempt in flight (a retry waiting in a server that stopped answering): says none was', async () => {
    const redis = await startRedis()
    // Paused, the server holds its connections and answers nothing: the worker cannot close.
    const pid = await redisPid(redis.url)
    try {
      const collector = await retryWaiting(redis, 92_000)
      process.kill(pid, 'SIGSTOP')
      await expectEndsOnItsOwn(collector)
      expect(collector.log).toContainEqual(closedLine(`no attempt was in flight, but the queue worker had not stopped after ${DRAIN} ms; the queued deliveries stay in the queue server`))
      expect(collector.report).toMatchObject({ drained: false, pending: 0, stopped: 0 })
    } finally {
      process.kill(pid, 'SIGCONT')
      await redis.stop()
    }
  }, 30_000)
})

/** The debug line `closed: <text>`, as the logger writes it. */
const closedLine = (text: string) => expect.stringMatching(new RegExp(`^analytics:collector closed: ${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\+\\d+ms$`))

async function redisPid(url: string): Promise<number> {
  const redis = new (await loadRedis())(url)
  try {
    return Number(/process_id:(\d+)/.exec(await redis.info('server'))![1])
  } finally {
    redis.disconnect()
  }
}
