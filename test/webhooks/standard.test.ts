/**
 * Standard Webhooks signatures: ours checked by the official `standardwebhooks` package, its
 * checked by ours, for one and two secrets (a rotation); stale, changed and wrongly keyed requests
 * refused; the pure-JS path (browsers, workers) equal to the native one; and a real destination
 * sending them, a stable `webhook-id` and a fresh timestamp at each attempt.
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it, vi } from 'vitest'
import { createWebhookHandler, isSignatureError, SignatureError, verifyStandardWebhook, WebhookDestination, toWebhookPayload } from '../../src/webhooks/index.js'
import { NATIVE, PORTABLE, standardKeys, standardSignature, webhookIdOf } from '../../src/webhooks/standard.js'
import { deliverToEnd, useFakeTimers } from './drive.js'
import { useServers } from './servers.js'

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`
const A = newSecret()
const B = newSecret()
const BODY = '{"version":1,"type":"track","event":"Ünïcode 🔥","properties":{"n":9223372036854775807}}'
const ID = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'

function ourHeaders(secrets: string[], body = BODY, nowMs = Date.now()) {
  const seconds = Math.floor(nowMs / 1000)
  return {
    'webhook-id': ID,
    'webhook-timestamp': String(seconds),
    'webhook-signature': standardSignature(standardKeys('s', secrets), ID, seconds, body),
  }
}

const reason = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: SignatureError) => error.reason)

describe('Standard Webhooks signatures', () => {
  it('ours, with one secret and with two, pass the official verifier for each secret', () => {
    expect(new Webhook(A).verify(BODY, ourHeaders([A]))).toEqual(JSON.parse(BODY))
    const both = ourHeaders([A, B])
    expect(both['webhook-signature'].split(' ')).toHaveLength(2)
    for (const secret of [A, B]) expect(() => new Webhook(secret).verify(BODY, both)).not.toThrow()
    expect(() => new Webhook(newSecret()).verify(BODY, both)).toThrow()
  })

  it("the official signer's pass ours, one or two signatures, as text or bytes, Headers or Node's record", async () => {
    const now = new Date()
    const signA = new Webhook(A).sign(ID, now, BODY)
    const signB = new Webhook(B).sign(ID, now, BODY)
    const headers = (signature: string) => ({ 'Webhook-Id': ID, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signature })
    await expect(verifyStandardWebhook(BODY, headers(signA), [A])).resolves.toEqual({ id: ID, timestamp: Math.floor(now.getTime() / 1000) })
    await expect(verifyStandardWebhook(Buffer.from(BODY), new Headers(headers(`${signA} ${signB}`)), [B])).resolves.toMatchObject({ id: ID })
    // A receiver mid-rotation holds both secrets; the sender may sign with either.
    await expect(verifyStandardWebhook(BODY, headers(signB), [A, B])).resolves.toMatchObject({ id: ID })
    await expect(verifyStandardWebhook(BODY, headers(signA), A)).resolves.toMatchObject({ id: ID })
  })

  it('refuses a stale or future timestamp, a changed body, a wrong secret, missing headers', async () => {
    const now = Date.now()
    expect(await reason(verifyStandardWebhook(BODY, ourHeaders([A], BODY, now - 301_000), [A], { now: () => now }))).toBe('stale-timestamp')
    expect(await reason(verifyStandardWebhook(BODY, ourHeaders([A], BODY, now - 299_000), [A], { now: () => now }))).toBe('accepted')
    expect(await reason(verifyStandardWebhook(BODY, ourHeaders([A], BODY, now - 61_000), [A], { now: () => now, toleranceSeconds: 60 }))).toBe('stale-timestamp')
    expect(await reason(verifyStandardWebhook(BODY, ourHeaders([A], BODY, now + 301_000), [A], { now: () => now }))).toBe('future-timestamp')
    expect(await reason(verifyStandardWebhook(BODY.replace('9223372036854775807', '9223372036854775808'), ourHeaders([A]), [A]))).toBe('no-matching-signature')
    expect(await reason(verifyStandardWebhook(BODY, ourHeaders([A]), [B]))).toBe('no-matching-signature')
    expect(await reason(verifyStandardWebhook(BODY, { ...ourHeaders([A]), 'webhook-id': 'msg_other' }, [A]))).toBe('no-matching-signature')
    expect(await reason(verifyStandardWebhook(BODY, { ...ourHeaders([A]), 'webhook-timestamp': 'soon' }, [A]))).toBe('bad-timestamp')
    const { 'webhook-signature': _dropped, ...unsigned } = ourHeaders([A])
    const error = await verifyStandardWebhook(BODY, unsigned, [A]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SignatureError)
    expect(isSignatureError(error)).toBe(true)
    expect(error).toMatchObject({ code: 'SIGNATURE', reason: 'missing-header', message: 'Missing the `webhook-signature` header.' })
  })

  it('refuses bad secrets with a ConfigError that does not show them', async () => {
    await expect(verifyStandardWebhook(BODY, ourHeaders([A]), ['not-a-secret'])).rejects.toMatchObject({ code: 'CONFIG', option: 'secrets[0]' })
    await expect(verifyStandardWebhook(BODY, ourHeaders([A]), ['whsec_%%%'])).rejects.toThrow(/not base64/)
    await expect(verifyStandardWebhook(BODY, ourHeaders([A]), [A, B, A])).rejects.toThrow('Expected `secrets` to be an array of one or two `whsec_…` secrets, got 3 entries.')
    expect(() => new WebhookDestination({ urls: [{ url: 'https://h.test/' }], standardSecrets: ['whsec_'] })).toThrow(/`standardSecrets\[0\]`/)
  })

  it('the pure-JS hashes (browsers, workers) give what node:crypto gives', () => {
    const keys = standardKeys('s', [A, B])
    for (const body of [BODY, '', 'é🔥x'.repeat(5_000), 'lone \ud800 surrogate']) {
      expect(standardSignature(keys, ID, 1_700_000_000, body, PORTABLE)).toBe(standardSignature(keys, ID, 1_700_000_000, body, NATIVE))
      expect(webhookIdOf(body, PORTABLE)).toBe(webhookIdOf(body, NATIVE))
    }
    expect(webhookIdOf(BODY)).toMatch(/^msg_[A-Za-z0-9_-]{22}$/)
    expect(webhookIdOf(`${BODY} `)).not.toBe(webhookIdOf(BODY))
  })
})

const server = useServers()

describe('WebhookDestination with standardSecrets', () => {
  it('sends X-Signature and the three headers; the id stays across retries, the timestamp is each attempt\'s', async () => {
    useFakeTimers()
    const a = await server({ status: 200 })
    a.replies.push({ status: 503 })
    const destination = new WebhookDestination({ urls: [{ url: a.url }], sharedSecret: 's', standardSecrets: [A, B], backoff: { baseMs: 60_000, capMs: 60_000 }, random: () => 0.999 })
    const { result } = await deliverToEnd(destination, toWebhookPayload({ type: 'track', userId: 'u', event: 'E', timestamp: '2026-11-22T10:00:00.000Z' }))
    expect(result).toMatchObject({ delivered: true, attempts: 2 })
    const [first, second] = a.requests
    expect(first.raw.equals(second.raw)).toBe(true)
    expect(first.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/)
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id'])
    expect(first.headers['webhook-id']).toBe(webhookIdOf(first.raw.toString('utf8')))
    expect(Number(second.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(59)
    for (const request of a.requests) {
      const headers = request.headers as Record<string, string>
      for (const secret of [A, B]) expect(() => new Webhook(secret).verify(request.raw, headers)).not.toThrow()
    }
    await destination.close()
  })
})

describe('createWebhookHandler({ standardSecrets })', () => {
  const post = (headers: Record<string, string>, body = BODY) => new Request('https://receiver.test/', { method: 'POST', body, headers })
  it('answers 200 to a valid request, 401 naming the reason otherwise; with `secret` too, both are checked', async () => {
    const onEvent = vi.fn()
    const handler = createWebhookHandler({ standardSecrets: [A], onEvent })
    expect((await handler(post(ourHeaders([A])))).status).toBe(200)
    expect(onEvent).toHaveBeenCalledTimes(1)
    const stale = await handler(post(ourHeaders([A], BODY, Date.now() - 600_000)))
    expect(stale.status).toBe(401)
    expect(await stale.json()).toMatchObject({ reason: 'stale-timestamp' })
    expect(await (await handler(post(ourHeaders([B])))).json()).toMatchObject({ reason: 'no-matching-signature' })
    const both = createWebhookHandler({ secret: 's', standardSecrets: [A], onEvent })
    expect((await both(post(ourHeaders([A])))).status).toBe(401)
    expect(onEvent).toHaveBeenCalledTimes(1)
    expect(() => createWebhookHandler({ onEvent })).toThrow('Expected `secret` to be a non-empty string (or `standardSecrets` to be given), got `undefined`.')
    expect(() => createWebhookHandler({ standardSecrets: [A], toleranceSeconds: -1, onEvent })).toThrow(/toleranceSeconds/)
  })
})
