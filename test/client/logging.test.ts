import { describe, expect, it, vi } from 'vitest'
import { Client } from '../../src/index.js'
import { collector, createTestClient, ENDPOINT, HttpResponse, installServer, settle, trackInput } from '../helpers/client.js'

installServer()

/** Lines the client wrote to console.error. */
function captureConsole() {
  const spy = vi.spyOn(console, 'error').mockImplementation(() => {})
  return () => spy.mock.calls.map((c) => c.map(String).join(' '))
}

/** A client that uses the DEBUG setting (no `debug` option), so we can test its discovery. */
function clientFromEnv(options: ConstructorParameters<typeof Client>[1] = {}) {
  const client = new Client('key', { endpoint: ENDPOINT, ...options })
  // Closed by the test itself; listeners removed by close().
  return client
}

describe('debug: true', () => {
  it('logs enqueue, flush, retry, delivery and failure lines via console.error', async () => {
    vi.useFakeTimers()
    const lines = captureConsole()
    collector((req, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : req.body.batch[0].userId === 'user-9' ? HttpResponse.json({}, { status: 400 }) : HttpResponse.json({})))
    const client = createTestClient({ debug: true })
    client.on('error', () => {})
    const sent = client.track(trackInput(0))
    expect(await settle(client.flush())).toEqual({ delivered: 1, failed: 0 })
    client.track(trackInput(9))
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    const log = lines()
    for (const line of log) expect(line.startsWith('analytics:client ')).toBe(true)
    expect(log.some((l) => l.includes('enqueued track') && l.includes(sent.messageId))).toBe(true)
    expect(log.some((l) => l.includes('flushing 1 message in 1 batch +'))).toBe(true)
    expect(log.some((l) => l.includes('attempt 1 failed') && l.includes('503') && l.includes('retrying'))).toBe(true)
    expect(log.some((l) => l.includes('delivered 1 message (200)'))).toBe(true)
    expect(log.some((l) => l.includes('failed:') && l.includes('400'))).toBe(true)
    expect(log.some((l) => l.includes(`sending 1 message to ${ENDPOINT}/v1/batch (`))).toBe(true)
    expect(log.filter((l) => /\b1 (messages|batches|attempts)\b/.test(l))).toEqual([])
    expect(log.some((l) => l.includes('1 message failed after 1 attempt +'))).toBe(true)
  })

  it('says how many attempts a batch took before it failed for good', async () => {
    vi.useFakeTimers()
    const lines = captureConsole()
    collector(() => HttpResponse.json({}, { status: 500 }))
    const client = createTestClient({ debug: true, maxRetries: 2 })
    client.on('error', () => {})
    client.track(trackInput(0))
    expect(await settle(client.flush())).toEqual({ delivered: 0, failed: 1 })
    expect(lines().some((l) => l.includes('1 message failed after 3 attempts +'))).toBe(true)
  })
})

describe('off by default', () => {
  it('writes nothing when DEBUG is unset, even on retries', async () => {
    vi.useFakeTimers()
    vi.stubEnv('DEBUG', undefined)
    const lines = captureConsole()
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = clientFromEnv()
    client.track(trackInput())
    expect(await settle(client.close())).toEqual({ delivered: 1, failed: 0 })
    expect(lines()).toEqual([])
  })
})

describe('the DEBUG setting', () => {
  it.each([
    ['analytics', true],
    ['*', true],
    ['other,analytics', true],
    ['other analytics', true],
    ['analy*', true],
    ['*,-analytics', false],
    ['analytics,-analytics', false],
    ['-analytics,*', false],
    ['other', false],
    ['analytics:extra', false],
    ['analytics:*', true],
    ['analytics:client', true],
    ['analytics:collector', false],
    ['analytics:*,-analytics:client', false],
    ['', false],
  ])('DEBUG=%j → logging %s', async (setting, enabled) => {
    vi.stubEnv('DEBUG', setting)
    const lines = captureConsole()
    collector()
    const client = clientFromEnv()
    client.track(trackInput())
    await client.close()
    expect(lines().some((l) => l.startsWith('analytics:client enqueued'))).toBe(enabled)
  })

  it('debug: false overrides DEBUG=analytics, and debug: true overrides no DEBUG', async () => {
    collector()
    vi.stubEnv('DEBUG', 'analytics')
    let lines = captureConsole()
    const quiet = clientFromEnv({ debug: false })
    quiet.track(trackInput())
    await quiet.close()
    expect(lines()).toEqual([])
    vi.restoreAllMocks()

    vi.stubEnv('DEBUG', undefined)
    lines = captureConsole()
    const loud = clientFromEnv({ debug: true })
    loud.track(trackInput())
    await loud.close()
    expect(lines().some((l) => l.startsWith('analytics:client enqueued'))).toBe(true)
  })

  it('reads localStorage.debug where there is no DEBUG variable (browsers)', async () => {
    vi.stubEnv('DEBUG', undefined)
    vi.stubGlobal('localStorage', { getItem: (key: string) => (key === 'debug' ? 'analytics' : null) })
    const lines = captureConsole()
    collector()
    const client = clientFromEnv()
    client.track(trackInput())
    await client.close()
    expect(lines().some((l) => l.startsWith('analytics:client enqueued'))).toBe(true)
  })
})
