import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector } from '../../../src/collector/index.js'
import { ClientClosedError } from '../../../src/errors.js'
import { WEBHOOK_USER_AGENT, toWebhookPayload, verifySignature } from '../../../src/webhooks/index.js'
import { KEY, forwardingCollector, post, recordingFetch, track, until } from '../helpers.js'

afterEach(() => {
  vi.useRealTimers()
  vi.restoreAllMocks()
})

/** A promise with its resolve function, to hold a receiver's answer. */
function deferred<T>() {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => (resolve = r))
  return { promise, resolve }
}

describe('forwarding to the source Webhooks destination', () => {
  it('with DEBUG=analytics, logs each retry and failure once (the collector\'s line, naming the source), and each delivery (fake timers)', async () => {
    vi.useFakeTimers()
    vi.stubEnv('DEBUG', 'analytics')
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    let n = 0
    const { collector } = forwardingCollector({}, () => new Response('', { status: n++ === 0 ? 503 : 200 }))
    await collector.fetch(post({ batch: [track()] }))
    await vi.advanceTimersByTimeAsync(1_000)
    const retries = lines.filter((line) => / failed \(/.test(line))
    expect(retries, lines.join('\n')).toEqual([expect.stringMatching(/^analytics:collector web: attempt 1 failed \(.*503.*\); retry in 500 ms \+\d+ms$/)])
    expect(lines).toContainEqual(expect.stringMatching(/^analytics:webhooks delivered to https:\/\/hooks\.test\/in \(200\) after 2 attempts/))
    await collector.close()
    vi.unstubAllEnvs()
  })

  it('POSTs each message as toWebhookPayload shapes it, signed with the shared secret', async () => {
    const receiver = recordingFetch()
    const collector = createCollector({
      sources: [
        {
          writeKey: KEY,
          name: 'web',
          webhooks: { enabled: true, urls: [{ url: 'https://hooks.test/in', headers: { 'X-Team': 'growth' } }], sharedSecret: 'shh' },
        },
      ],
      fetch: receiver.fetch,
    })
    const message = track({ properties: { plan: 'pro' }, context: { ip: '10.0.0.1' } })
    expect((await collector.fetch(post({ batch: [message] }))).status).toBe(200)
    await until(() => receiver.calls.length === 1, 'delivery')
    const [call] = receiver.calls
    expect(call.url).toBe('https://hooks.test/in')
    expect(call.headers['user-agent']).toBe(WEBHOOK_USER_AGENT)
    expect(call.headers['content-type']).toBe('application/json')
    expect(call.headers['x-team']).toBe('growth')
    expect(await verifySignature(call.body, call.headers['x-signature'], 'shh')).toBe(true)
    // The whole message, as toWebhookPayload shapes it, with the collector's receivedAt.
    expect(call.json.receivedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    expect(call.json).toEqual(toWebhookPayload({ ...(message as Parameters<typeof toWebhookPayload>[0]), receivedAt: call.json.receivedAt }))
  })

  it('sends nothing from a source whose destination is disabled', async () => {
    const receiver = recordingFetch()
    const collector = createCollector({
      sources: [{ writeKey: KEY, name: 'web', webhooks: { enabled: false, urls: [{ url: 'https://hooks.test/in' }] } }],
      fetch: receiver.fetch,
    })
    expect((await collector.fetch(post({ batch: [track()] }))).status).toBe(200)
    expect((await collector.close()).drained).toBe(true)
    expect(receiver.calls).toHaveLength(0)
    expect(collector.stats()).toMatchObject({ received: 1, skipped: 1, forwarded: 0 })
  })

  it('routes each source to its own destination', async () => {
    const receiver = recordingFetch()
    const collector = createCollector({
      sources: [
        { writeKey: 'K1', name: 'web', webhooks: { urls: [{ url: 'https://web.test/' }] } },
        { writeKey: 'K2', name: 'app', webhooks: { urls: [{ url: 'https://app.test/' }] } },
      ],
      fetch: receiver.fetch,
    })
    await collector.fetch(post({ batch: [track({ messageId: 'w' })] }, { key: 'K1' }))
    await collector.fetch(post({ batch: [track({ messageId: 'a' })] }, { key: 'K2' }))
    await until(() => receiver.calls.length === 2, 'deliveries')
    const routes = Object.fromEntries(receiver.calls.map((c) => [c.json.messageId, c.url]))
    expect(routes).toEqual({ w: 'https://web.test/', a: 'https://app.test/' })
  })

  it('counts a final refusal as failed', async () => {
    const { collector } = forwardingCollector({}, () => new Response('no', { status: 400 }))
    await collector.fetch(post({ batch: [track()] }))
    await until(() => collector.stats().pending === 0, 'settled')
    expect(collector.stats()).toMatchObject({ received: 1, forwarded: 0, failed: 1, retrying: 0 })
  })

  it('counts a delivery waiting for its retry as retrying, then forwarded (fake timers)', async () => {
    vi.useFakeTimers()
    vi.spyOn(Math, 'random').mockReturnValue(0.5) // the retry waits 500 ms
    const { collector, calls } = forwardingCollector({}, (_, n) => new Response('', { status: n === 1 ? 503 : 200 }))
    await collector.fetch(post({ batch: [track()] }))
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toHaveLength(1)
    expect(collector.stats()).toMatchObject({ retrying: 1, pending: 1, retries: 1, forwarded: 0 })
    await vi.advanceTimersByTimeAsync(499)
    expect(calls).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(calls).toHaveLength(2)
    expect(collector.stats()).toMatchObject({ retrying: 0, pending: 0, forwarded: 1, failed: 0 })
  })

  it('keeps at most deliveryConcurrency deliveries with the destination', async () => {
    let inFlight = 0
    let peak = 0
    const gates: Array<() => void> = []
    const { collector, calls } = forwardingCollector({ deliveryConcurrency: 2 }, async () => {
      peak = Math.max(peak, ++inFlight)
      await new Promise<void>((resolve) => gates.push(resolve))
      inFlight--
      return new Response('ok')
    })
    const batch = Array.from({ length: 6 }, (_, i) => track({ messageId: `m${i}` }))
    await collector.fetch(post({ batch }))
    await until(() => calls.length === 2, 'two in flight')
    expect(collector.stats().pending).toBe(6)
    while (collector.stats().forwarded < 6) {
      gates.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(peak).toBe(2)
    expect(calls).toHaveLength(6)
  })

  it('answers 503 with Retry-After when the backlog is full, accepting nothing of that batch', async () => {
    const hold = deferred<Response>()
    const { collector } = forwardingCollector({ maxPendingDeliveries: 3 }, () => hold.promise)
    expect((await collector.fetch(post({ batch: [track({ messageId: 'a' }), track({ messageId: 'b' })] }))).status).toBe(200)
    const refused = await collector.fetch(post({ batch: [track({ messageId: 'c' }), track({ messageId: 'd' })] }))
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(((await refused.json()) as any).error.code).toBe('BACKLOG_FULL')
    expect(collector.stats()).toMatchObject({ received: 2, pending: 2 })
    hold.resolve(new Response('ok'))
    await until(() => collector.stats().forwarded === 2, 'delivered')
  })

  it('takes a batch larger than the whole limit when nothing is pending (refused, its sender would retry it for ever)', async () => {
    const hold = deferred<Response>()
    const { collector } = forwardingCollector({ maxPendingDeliveries: 3 }, () => hold.promise)
    const big = (prefix: string) => post({ batch: [1, 2, 3, 4, 5].map((n) => track({ messageId: `${prefix}${n}` })) })
    expect((await collector.fetch(big('a'))).status).toBe(200)
    expect(collector.stats()).toMatchObject({ pending: 5 })
    // With a backlog, the limit holds as before.
    const refused = await collector.fetch(big('b'))
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as any).error.code).toBe('BACKLOG_FULL')
    hold.resolve(new Response('ok'))
    await until(() => collector.stats().forwarded === 5, 'delivered')
    await collector.close()
  })
})

describe('close()', () => {
  it('stops accepting and waits for deliveries in flight', async () => {
    const hold = deferred<Response>()
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    const { collector, calls } = forwardingCollector({ debug: true }, () => hold.promise)
    await collector.fetch(post({ batch: [track()] }))
    await until(() => calls.length === 1, 'in flight')
    const closing = collector.close()
    expect(lines).toContainEqual(expect.stringMatching(/^analytics:collector closing: 1 delivery pending, waiting up to 10000 ms \+\d+ms$/))
    expect(collector.closed).toBe(true)
    expect((await collector.fetch(post({ batch: [track()] }))).status).toBe(503)
    hold.resolve(new Response('ok'))
    const report = await closing
    expect(report).toMatchObject({ drained: true, pending: 0, stats: { forwarded: 1, received: 1 } })
    expect(await collector.close()).toBe(report)
  })

  it('is bounded: reports what is still pending and cancels its retries (fake timers)', async () => {
    vi.useFakeTimers()
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    // Mid-range jitter: a retry delay drawn under 1 ms would fire within the first step.
    vi.spyOn(Math, 'random').mockReturnValue(0.5)
    const { collector, calls } = forwardingCollector({ drainTimeout: 3_000, debug: true }, () => new Response('', { status: 503 }))
    await collector.fetch(post({ batch: [track({ messageId: 'a' }), track({ messageId: 'b' })] }))
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toHaveLength(2)
    const closing = collector.close()
    await vi.advanceTimersByTimeAsync(3_000)
    const report = await closing
    expect(report.drained).toBe(false)
    expect(report.pending).toBe(2)
    expect(report.stats).toMatchObject({ pending: 0, failed: 2, forwarded: 0 })
    expect(lines).toContainEqual(expect.stringMatching(/^analytics:collector closed: 2 deliveries still pending cancelled \+\d+ms$/))
  })

  it('cancels a request still on the wire when the bound is reached, not at its own timeout (15 s here), and counts it failed (fake timers)', async () => {
    vi.useFakeTimers()
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    // The receiver never answers, and its fetch ignores the abort signal.
    const { fetch, calls } = recordingFetch(() => new Promise<Response>(() => {}))
    const collector = createCollector({
      sources: [{ writeKey: KEY, name: 'web', webhooks: { urls: [{ url: 'https://hooks.test/in' }], timeout: 15_000 } }],
      fetch,
      debug: true,
    })
    await collector.fetch(post({ batch: [track()] }))
    await vi.advanceTimersByTimeAsync(0)
    expect(calls).toHaveLength(1)
    let report: Awaited<ReturnType<typeof collector.close>> | undefined
    void collector.close(500).then((r) => (report = r))
    await vi.advanceTimersByTimeAsync(500)
    expect(report, 'close(500) still waiting for the request').toBeDefined()
    expect(report).toMatchObject({ drained: false, pending: 1, stats: { failed: 1, forwarded: 0, pending: 0 } })
    expect(lines).toContainEqual(expect.stringMatching(/web: track failed: WebhookDestination closed before the message was delivered; its request was cancelled\./))
    expect(lines).toContainEqual(expect.stringMatching(/^analytics:collector closed: 1 delivery still pending cancelled \+\d+ms$/))
  })

  it('refuses deletions and audience syncs after close', async () => {
    const { collector } = forwardingCollector()
    await collector.close()
    expect(() => collector.requestDeletion({ userId: 'u1' })).toThrow(ClientClosedError)
    await expect(collector.syncAudience({ source: 'web', audience: 'VIP', members: [] })).rejects.toThrow(ClientClosedError)
  })
})
