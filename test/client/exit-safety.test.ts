/**
 * Exit safety with real processes: a child Node process runs the client against a real loopback
 * HTTP server in this process (../helpers/child-client.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startChildClientKit, type ChildClientKit } from '../helpers/child-client.js'

let kit: ChildClientKit

beforeAll(async () => {
  kit = await startChildClientKit()
})

afterEach(() => kit.reset())

afterAll(() => kit.close())

describe('exit safety (real node, real loopback server)', () => {
  it('a script that tracks 3 messages and never calls flush or close delivers them, then exits on its own', async () => {
    // flushAfter is 10 minutes: if delivery waited for the timer, the child would not exit before the test timeout.
    const result = await kit.run('never-flushes', `
      const client = new Client('KEY', { endpoint, flushAfter: 600000 })
      for (let i = 0; i < 3; i++) client.track({ event: 'Exit ' + i, userId: 'u' + i })
      process.on('exit', () => console.log(JSON.stringify(client.stats())))
    `)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    const messages = kit.received.flatMap((b) => b.batch)
    expect(messages.map((m) => m.event).sort()).toEqual(['Exit 0', 'Exit 1', 'Exit 2'])
    expect(JSON.parse(result.stdout)).toMatchObject({ queued: 0, inFlight: 0, delivered: 3 })
  }, 15_000)

  it("a message tracked by the app's own beforeExit listener, added after the client, is delivered before the process exits", async () => {
    // The client's exit hook runs first (it was registered first) and finds nothing queued.
    const result = await kit.run('track-in-before-exit', `
      const client = new Client('KEY', { endpoint, flushAfter: 600000 })
      client.track({ event: 'Job Started', userId: 'u' })
      await client.flush()
      let finished = false
      process.on('beforeExit', () => {
        if (finished) return
        finished = true
        client.track({ event: 'Job Finished', userId: 'u' })
      })
      process.on('exit', () => console.log(JSON.stringify(client.stats())))
    `)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(kit.received.flatMap((b) => b.batch).map((m) => m.event)).toEqual(['Job Started', 'Job Finished'])
    expect(JSON.parse(result.stdout)).toMatchObject({ queued: 0, inFlight: 0, delivered: 2 })
  }, 15_000)

  it('a pending flushAfter timer alone does not keep the process alive', async () => {
    // The exit hook is removed, so only the client's timer is left: the process must still exit.
    const result = await kit.run('timer-only', `
      const client = new Client('KEY', { endpoint, flushAfter: 600000 })
      client.track({ event: 'Pending', userId: 'u' })
      process.removeAllListeners('beforeExit')
      process.on('exit', () => console.log(JSON.stringify(client.stats())))
    `)
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ queued: 1, delivered: 0 })
    expect(kit.received).toHaveLength(0)
  }, 15_000)

  it('a client with nothing queued lets the process exit at once', async () => {
    const result = await kit.run('idle', `
      const client = new Client('KEY', { endpoint })
      process.on('exit', () => console.log('exited'))
    `)
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe('exited')
    expect(kit.received).toHaveLength(0)
  }, 15_000)

  it('at exit, a batch that needs a retry is retried before the process exits', async () => {
    kit.answers = [503, 200]
    const result = await kit.run('retry-at-exit', `
      const client = new Client('KEY', { endpoint, flushAfter: 600000, minRetryDelay: 200 })
      client.on('retry', (e) => console.log('retry ' + e.attempt))
      client.track({ event: 'Retried', userId: 'u' })
    `)
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe('retry 1')
    expect(kit.received.flatMap((b) => b.batch).map((m) => m.event)).toEqual(['Retried'])
  }, 15_000)

  it('await close() keeps the process alive while the only batch waits out a Retry-After', async () => {
    kit.answers = [503, 200]
    kit.retryAfter = '1'
    const result = await kit.run('retry-after-close', `
      const client = new Client('KEY', { endpoint, minRetryDelay: 1 })
      client.track({ event: 'Held', userId: 'u' })
      console.log(JSON.stringify(await client.close()))
    `)
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ delivered: 1, failed: 0 })
    expect(kit.received.flatMap((b) => b.batch).map((m) => m.event)).toEqual(['Held'])
  }, 15_000)

  it('a client per invocation, flushed and never closed, is not held by the exit hook: collected, one listener, no warning', async () => {
    // The serverless pattern: a new client per request, `await flush()` before returning, no close().
    const result = await kit.run('client-per-invocation', `
      const refs = []
      async function handle(i) {
        const client = new Client('KEY', { endpoint, flushAt: 1 })
        client.track({ event: 'Invocation ' + i, userId: 'u' })
        await client.flush()
        refs.push(new WeakRef(client))
      }
      for (let i = 0; i < 12; i++) await handle(i)
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
      globalThis.gc()
      console.log(JSON.stringify({ collected: refs.filter((ref) => ref.deref() === undefined).length, listeners: process.listenerCount('beforeExit') }))
    `, ['--expose-gc'])
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ collected: 12, listeners: 1 })
    expect(kit.received.flatMap((b) => b.batch)).toHaveLength(12)
  }, 15_000)

  it('a failing batch at exit is reported, not thrown, and the process still exits 0', async () => {
    kit.answers = [400]
    const result = await kit.run('fails-at-exit', `
      const client = new Client('KEY', { endpoint, flushAfter: 600000 })
      client.track({ event: 'Refused', userId: 'u' })
    `)
    expect(result.code).toBe(0)
    expect(result.stderr).toContain('1 message not delivered')
    expect(result.stderr).toContain('400')
  }, 15_000)
})
