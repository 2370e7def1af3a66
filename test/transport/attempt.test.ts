import { afterEach, describe, expect, it, vi } from 'vitest'
import { AbortedError, NetworkError, TimeoutError, TlsError } from '../../src/errors.js'
import { attemptRequest, isTlsFailure } from '../../src/transport/attempt.js'
import { discardBody } from '../../src/platform/server.js'

afterEach(() => {
  vi.useRealTimers()
})

const request = { url: 'https://collector.test/v1/batch', headers: { 'Content-Type': 'application/json' }, body: '{}', timeoutMs: 1000 }

/** A fetch that never answers, but honours its abort signal like a real one. */
const hangingFetch = vi.fn((_url: string, init?: RequestInit) =>
  new Promise<Response>((_, reject) => {
    init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')))
  }),
)

describe('attemptRequest', () => {
  it('POSTs with redirect: manual and the given headers and body', async () => {
    const fetch = vi.fn(async (_url: string, _init?: RequestInit) => new Response(null, { status: 200 }))
    const response = await attemptRequest(fetch, request)
    expect(response.status).toBe(200)
    expect(fetch).toHaveBeenCalledWith(request.url, expect.objectContaining({
      method: 'POST', headers: request.headers, body: '{}', redirect: 'manual', signal: expect.any(AbortSignal),
    }))
    expect(fetch.mock.calls[0][1]).not.toHaveProperty('keepalive')
  })

  it('passes keepalive when asked', async () => {
    const fetch = vi.fn(async (_url: string, _init?: RequestInit) => new Response(null, { status: 200 }))
    await attemptRequest(fetch, { ...request, keepalive: true })
    expect(fetch.mock.calls[0][1]).toMatchObject({ keepalive: true })
  })

  it('times out with TimeoutError after timeoutMs', async () => {
    vi.useFakeTimers()
    const result = attemptRequest(hangingFetch, request).catch((e) => e)
    await vi.advanceTimersByTimeAsync(999)
    await vi.advanceTimersByTimeAsync(1)
    const error = await result
    expect(error).toBeInstanceOf(TimeoutError)
    expect(error.code).toBe('TIMEOUT')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('an outer abort is an AbortedError', async () => {
    const controller = new AbortController()
    const result = attemptRequest(hangingFetch, { ...request, signal: controller.signal }).catch((e) => e)
    controller.abort()
    expect(await result).toBeInstanceOf(AbortedError)
    const already = new AbortController()
    already.abort()
    expect(await attemptRequest(hangingFetch, { ...request, signal: already.signal }).catch((e) => e)).toBeInstanceOf(AbortedError)
  })

  it('ends at timeoutMs, or at an outer abort, even when the fetch ignores its signal', async () => {
    vi.useFakeTimers()
    const deaf = async () => new Promise<Response>(() => {})
    const timed = attemptRequest(deaf, request).catch((e) => e)
    await vi.advanceTimersByTimeAsync(1000)
    expect(await timed).toBeInstanceOf(TimeoutError)
    const controller = new AbortController()
    const stopped = attemptRequest(deaf, { ...request, signal: controller.signal }).catch((e) => e)
    controller.abort()
    expect(await stopped).toBeInstanceOf(AbortedError)
    expect(vi.getTimerCount()).toBe(0)
  })

  /** An answer whose headers arrive and whose body never ends. */
  const stalled = (status: number) => async (_url: string, init?: RequestInit) =>
    new Response(new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"message":"par'))
        init?.signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')))
      },
    }), { status, headers: { 'Content-Type': 'application/json' } })

  it("reads a refusal's body within timeoutMs: a body that stalls leaves the status, without a reason", async () => {
    vi.useFakeTimers()
    const result = attemptRequest(stalled(500), request)
    await vi.advanceTimersByTimeAsync(1000)
    const response = await result
    expect(response.status).toBe(500)
    expect(response.body).toBeUndefined()
    expect(await response.text()).toBe('')
    expect(vi.getTimerCount()).toBe(0)
  })

  it("keeps a refusal's body text, read whole, and leaves a success's body to its reader", async () => {
    const refusal = await attemptRequest(async () => new Response('{"message":"no"}', { status: 400 }), request)
    expect([refusal.body, await refusal.text()]).toEqual([undefined, '{"message":"no"}'])
    const success = await attemptRequest(async () => new Response('ok', { status: 200 }), request)
    expect(success.body).toBeInstanceOf(ReadableStream)
  })

  it('a thrown or rejected fetch is a NetworkError with the cause', async () => {
    const cause = new TypeError('fetch failed')
    const error = await attemptRequest(() => { throw cause }, request).catch((e) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.cause).toBe(cause)
    expect(error.message).toContain('fetch failed')
  })

  it('a TLS certificate failure is a TlsError naming the code', async () => {
    const cause = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('self-signed'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }) })
    const error = await attemptRequest(async () => { throw cause }, request).catch((e) => e)
    expect(error).toBeInstanceOf(TlsError)
    expect(error.message).toContain('DEPTH_ZERO_SELF_SIGNED_CERT')
  })
})

describe('isTlsFailure', () => {
  it.each([
    [{ code: 'CERT_HAS_EXPIRED' }, true],
    [{ cause: { code: 'ERR_TLS_CERT_ALTNAME_INVALID' } }, true],
    [{ cause: { cause: { code: 'SELF_SIGNED_CERT_IN_CHAIN' } } }, true],
    [{ code: 'ECONNRESET' }, false],
    [{ cause: { code: 'ECONNREFUSED' } }, false],
    [new Error('plain'), false],
    // Deno: no code, the words only.
    [new TypeError('fetch failed', { cause: new Error('client error (Connect): invalid peer certificate: UnknownIssuer') }), true],
    [new TypeError('fetch failed', { cause: new Error('client error (Connect): Connection refused (os error 111)') }), false],
    [null, false],
  ])('%j → %s', (error, tls) => {
    expect(isTlsFailure(error)).toBe(tls)
  })
})

describe('discardBody', () => {
  it('never throws', async () => {
    const response = new Response('body')
    await response.text()
    await expect(discardBody(response, 1000)).resolves.toBeUndefined()
  })

  it('reads a stream body to its end, so the connection can be reused', async () => {
    const response = new Response('body')
    await discardBody(response, 1000)
    expect(response.bodyUsed).toBe(true)
  })

  it('leaves an answer read whole (no body stream, as nodeRequest gives) alone: no copy of its bytes', async () => {
    const arrayBuffer = vi.fn(async () => new ArrayBuffer(0))
    await discardBody({ status: 200, headers: new Headers(), text: async () => '', arrayBuffer }, 1000)
    expect(arrayBuffer).not.toHaveBeenCalled()
  })

  it('keeps none of an endless body: reads it chunk by chunk, then cancels it once timeoutMs have passed (fake timers)', async () => {
    vi.useFakeTimers()
    let pulled = 0
    const cancel = vi.fn()
    // 64 KiB every 10 ms, for ever (until cancelled): a receiver streaming its answer.
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => new Promise<void>((resolve) => setTimeout(() => {
        if (cancel.mock.calls.length === 0) controller.enqueue(new Uint8Array(65_536))
        pulled++
        resolve()
      }, 10)),
      cancel,
    })
    const response = new Response(body)
    const arrayBuffer = vi.spyOn(response, 'arrayBuffer')
    let done = false
    void discardBody(response, 1_000).then(() => (done = true))
    await vi.advanceTimersByTimeAsync(900)
    expect(done).toBe(false)
    // It is being read (not left to fill a buffer), never whole.
    expect(pulled).toBeGreaterThanOrEqual(80)
    await vi.advanceTimersByTimeAsync(150)
    expect(done).toBe(true)
    expect(cancel).toHaveBeenCalledOnce()
    expect(arrayBuffer).not.toHaveBeenCalled()
  })
})
