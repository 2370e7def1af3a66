/**
 * A real HTTPS server with a self-signed certificate made at test time: the destination refuses
 * it with a TlsError, its request handler never runs, and no retry is scheduled.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { TlsError, WebhookDestination, toWebhookPayload } from '../../src/webhooks/index.js'
import { deliverToEnd, settle, useFakeTimers } from './drive.js'
import { selfSignedCertificate, startHttpsServer, startServer, type TestServer } from './servers.js'

const payload = toWebhookPayload({ type: 'track', event: 'Signed Up', userId: 'u-1' })
let cert: { key: Buffer; cert: Buffer }
let https: TestServer
let handshakes = 0

beforeAll(async () => {
  cert = selfSignedCertificate()
  https = await startHttpsServer(cert, { status: 200 })
  https.server.on('secureConnection', () => handshakes++)
})

afterAll(async () => {
  await https.close()
})

afterEach(() => {
  vi.useRealTimers()
})

describe('a self-signed certificate', () => {
  it('is a TlsError, not retried, and the HTTPS server never receives a request', async () => {
    useFakeTimers()
    const destination = new WebhookDestination({ urls: [{ url: https.url }], sharedSecret: 's' })
    const retries: unknown[] = []
    destination.on('retry', (info) => retries.push(info))
    const { result } = await deliverToEnd(destination, payload)
    expect(result).toMatchObject({ delivered: false, attempts: 1 })
    expect(result.error).toBeInstanceOf(TlsError)
    expect(result.error).toMatchObject({ code: 'TLS', message: expect.stringMatching(/SELF_SIGNED/) })
    expect(result.results).toEqual([{ url: https.url, attempt: 1, error: result.error, durationMs: expect.any(Number) }])
    expect(retries).toEqual([])
    expect(destination.pendingCount).toBe(0)
    let later = 0
    destination.on('attempt', () => later++)
    await vi.advanceTimersByTimeAsync(14_400_000)
    await settle()
    expect(later).toBe(0)
    // The handshake never completed, so no request reached the handler.
    expect(https.requests).toHaveLength(0)
    expect(handshakes).toBe(0)
  })

  it('next to a 503 URL: the retry goes to the other URL only, never to the TLS one', async () => {
    useFakeTimers()
    const http: TestServer = await startServer({ status: 200 })
    http.replies.push({ status: 503 })
    try {
      const destination = new WebhookDestination({ urls: [{ url: https.url }, { url: http.url }] })
      const urlsPerAttempt: string[][] = []
      destination.on('attempt', ({ urls }) => urlsPerAttempt.push(urls))
      const { result } = await deliverToEnd(destination, payload)
      expect(urlsPerAttempt).toEqual([[https.url, http.url], [http.url]])
      expect(result).toMatchObject({ delivered: true, attempts: 2 })
      expect(result.results[0]).toMatchObject({ url: https.url, attempt: 1, error: { code: 'TLS' } })
      expect(https.requests).toHaveLength(0)
    } finally {
      await http.close()
    }
  })
})
