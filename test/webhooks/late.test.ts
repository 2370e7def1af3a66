/**
 * A URL still answering when another URL accepted the message (`pending: true`): its outcome,
 * when it comes, is reported (`attempt()`'s `onLate`, the destination's `late` event) and changes
 * nothing else: no retry, the delivery's result as it was. Real loopback servers, fake timers.
 */
import { describe, expect, it, vi } from 'vitest'
import { WebhookDestination, toWebhookPayload, type WebhookDestinationEvents } from '../../src/webhooks/index.js'
import { settle, useFakeTimers } from './drive.js'
import { useServers } from './servers.js'

const server = useServers()
const payload = toWebhookPayload({ type: 'track', event: 'Two URLs', userId: 'u', messageId: 'm-late', timestamp: '2026-11-22T10:00:00.000Z' })

/** Lets real I/O run until `predicate` holds (bounded: a report that never comes fails the test). */
async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2_000 && !predicate(); i++) await settle()
  expect(predicate(), `waited for ${what}`).toBe(true)
}

/** A reply held back until `release()`. */
function gate(): { release: () => void; waitFor: () => Promise<void> } {
  let release = () => {}
  const released = new Promise<void>((resolve) => (release = resolve))
  return { release, waitFor: () => released }
}

describe('a URL answering after another accepted the message', () => {
  it('deliver(): the `late` event gives its status or error (a 400, a timeout); nothing is retried and the result keeps `pending`', async () => {
    useFakeTimers()
    const refusal = gate()
    const fast = await server({ status: 200 })
    const refusing = await server({ status: 400, waitFor: refusal.waitFor })
    const hanging = await server({ status: 200, hang: true })
    const destination = new WebhookDestination({ urls: [{ url: fast.url }, { url: refusing.url }, { url: hanging.url }], timeout: 5_000 })
    const late: Array<WebhookDestinationEvents['late']> = []
    const retries: unknown[] = []
    destination.on('late', (info) => late.push(info))
    destination.on('retry', (info) => retries.push(info))
    const result = await destination.deliver(payload)
    expect(result).toStrictEqual({
      delivered: true,
      attempts: 1,
      results: [{ url: fast.url, attempt: 1, status: 200, durationMs: expect.any(Number) }, { url: refusing.url, attempt: 1, pending: true }, { url: hanging.url, attempt: 1, pending: true }],
    })
    expect(late).toEqual([])

    refusal.release()
    await until(() => late.length === 1, 'the 400')
    expect(late[0]).toStrictEqual({ payload, attempt: 1, url: refusing.url, status: 400, error: expect.objectContaining({ code: 'HTTP', status: 400 }), durationMs: expect.any(Number) })
    await vi.advanceTimersByTimeAsync(5_000)
    await until(() => late.length === 2, 'the timeout')
    expect(late[1]).toStrictEqual({ payload, attempt: 1, url: hanging.url, error: expect.objectContaining({ code: 'TIMEOUT' }), durationMs: expect.any(Number) })

    // Hours pass: nothing more is sent, and the result already given is not changed.
    await vi.advanceTimersByTimeAsync(5 * 3_600_000)
    await settle()
    expect([fast, refusing, hanging].map((s) => s.requests.length)).toEqual([1, 1, 1])
    expect(retries).toEqual([])
    expect(result.results[1]).toStrictEqual({ url: refusing.url, attempt: 1, pending: true })
  })

  it('a URL answering 2xx late is reported too', async () => {
    const second = gate()
    const fast = await server({ status: 200 })
    const slow = await server({ status: 202, waitFor: second.waitFor })
    const destination = new WebhookDestination({ urls: [{ url: fast.url }, { url: slow.url }] })
    const late: Array<WebhookDestinationEvents['late']> = []
    destination.on('late', (info) => late.push(info))
    expect((await destination.deliverSerialized('{"type":"track"}', payload)).results[1]).toMatchObject({ pending: true })
    second.release()
    await until(() => late.length === 1, 'the 202')
    expect(late).toStrictEqual([{ payload, attempt: 1, url: slow.url, status: 202, durationMs: expect.any(Number) }])
  })

  it('attempt(): `onLate` is called with the URL\'s index and outcome; a throw from it goes nowhere', async () => {
    const refusal = gate()
    const fast = await server({ status: 200 })
    const refusing = await server({ status: 503, waitFor: refusal.waitFor })
    const destination = new WebhookDestination({ urls: [{ url: refusing.url }, { url: fast.url }] })
    const calls: unknown[] = []
    const onLate = (index: number, result: unknown) => {
      calls.push([index, result])
      throw new Error('a caller bug')
    }
    const outcome = await destination.attempt('{"type":"track"}', { attempt: 3, onLate })
    expect(outcome).toMatchObject({ deliveredBy: 1, retry: [], results: [{ url: refusing.url, attempt: 3, pending: true }, { url: fast.url, attempt: 3, status: 200 }] })
    refusal.release()
    await until(() => calls.length === 1, 'the 503')
    // Late, a 503 is only reported: the message is delivered, nothing asks for another attempt.
    expect(calls).toStrictEqual([[0, { url: refusing.url, attempt: 3, status: 503, error: expect.objectContaining({ code: 'HTTP', status: 503 }), durationMs: expect.any(Number) }]])
    // Let a leaked rejection surface: vitest fails the run on one.
    await settle()
  })

  it('DEBUG=analytics:webhooks logs the late outcome', async () => {
    const refusal = gate()
    const fast = await server({ status: 200 })
    const refusing = await server({ status: 400, waitFor: refusal.waitFor })
    vi.stubEnv('DEBUG', 'analytics:webhooks')
    const lines: string[] = []
    const spy = vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    try {
      await new WebhookDestination({ urls: [{ url: fast.url }, { url: refusing.url }] }).deliver(payload)
      refusal.release()
      await until(() => lines.length === 3, 'the third line')
    } finally {
      spy.mockRestore()
      vi.unstubAllEnvs()
    }
    expect(lines[2].replace(/ \+\d+ms$/, '')).toBe(`analytics:webhooks attempt 1, after the delivery: ${refusing.url} answered 400.`)
  })
})
