import { afterEach, describe, expect, it, vi } from 'vitest'
import { HttpError, NetworkError } from '../../src/errors.js'
import { attemptsOf, retry, type RetryInfo } from '../../src/transport/attempt.js'

afterEach(() => {
  vi.useRealTimers()
})

const backoff = { baseMs: 1000, capMs: 8000 }

describe('retry()', () => {
  it('returns the first success', async () => {
    const attempt = vi.fn(async (n: number) => `ok ${n}`)
    await expect(retry(attempt, { retries: 3, backoff })).resolves.toBe('ok 1')
    expect(attempt).toHaveBeenCalledTimes(1)
  })

  it('retries retryable errors with the policy’s delays, slept on timers', async () => {
    vi.useFakeTimers()
    const infos: RetryInfo[] = []
    const started: number[] = []
    const attempt = vi.fn(async (n: number) => {
      started.push(Date.now())
      if (n < 4) throw new NetworkError('reset')
      return n
    })
    const result = retry(attempt, { retries: 5, backoff, random: () => 0.5, onRetry: (i) => infos.push(i) })
    await vi.advanceTimersByTimeAsync(10_000)
    await expect(result).resolves.toBe(4)
    expect(infos.map((i) => [i.attempt, i.delayMs])).toEqual([[1, 500], [2, 1000], [3, 2000]])
    expect(started.slice(1).map((t, i) => t - started[i])).toEqual([500, 1000, 2000])
  })

  it('gives up after `retries` retries with the last error, carrying the attempt count', async () => {
    vi.useFakeTimers()
    const attempt = vi.fn(async () => {
      throw new HttpError(503, 'unavailable')
    })
    const result = retry(attempt, { retries: 2, backoff, random: () => 0 }).catch((e) => e)
    await vi.advanceTimersByTimeAsync(100)
    const error = await result
    expect(error).toBeInstanceOf(HttpError)
    expect(attempt).toHaveBeenCalledTimes(3)
    expect(attemptsOf(error)).toBe(3)
  })

  it('fails at once on a final error', async () => {
    const onRetry = vi.fn()
    const attempt = vi.fn(async () => {
      throw new HttpError(400, 'bad')
    })
    await expect(retry(attempt, { retries: 5, backoff, onRetry })).rejects.toBeInstanceOf(HttpError)
    expect(attempt).toHaveBeenCalledTimes(1)
    expect(onRetry).not.toHaveBeenCalled()
  })

  it('fails at once on a programming error (TypeError)', async () => {
    const attempt = vi.fn(async () => {
      throw new TypeError('x is not a function')
    })
    await expect(retry(attempt, { retries: 5, backoff })).rejects.toBeInstanceOf(TypeError)
    expect(attempt).toHaveBeenCalledTimes(1)
  })

  it('waits at least Retry-After', async () => {
    vi.useFakeTimers()
    const infos: RetryInfo[] = []
    let n = 0
    const result = retry(
      async () => {
        if (n++ === 0) throw new HttpError(429, 'slow down', { retryAfterMs: 7000 })
        return 'ok'
      },
      { retries: 3, backoff, random: () => 0, onRetry: (i) => infos.push(i) },
    )
    await vi.advanceTimersByTimeAsync(6999)
    expect(n).toBe(1)
    await vi.advanceTimersByTimeAsync(1)
    await expect(result).resolves.toBe('ok')
    expect(infos[0].delayMs).toBe(7000)
  })

  it('stops when the window would be exceeded', async () => {
    vi.useFakeTimers()
    const attempt = vi.fn(async () => {
      throw new NetworkError('down')
    })
    const result = retry(attempt, { retries: Number.POSITIVE_INFINITY, backoff, windowMs: 5000, random: () => 0.999 }).catch((e) => e)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(await result).toBeInstanceOf(NetworkError)
    // Delays 999, 1998, 3996 (sum 6993 > 5000): the third retry is not scheduled.
    expect(attempt).toHaveBeenCalledTimes(3)
  })

  it('an abort during a retry sleep ends it with the signal’s reason', async () => {
    vi.useFakeTimers()
    const controller = new AbortController()
    const attempt = vi.fn(async () => {
      throw new NetworkError('down')
    })
    const result = retry(attempt, { retries: 5, backoff, random: () => 0.5, signal: controller.signal }).catch((e) => e)
    await vi.advanceTimersByTimeAsync(100)
    const reason = new Error('closing')
    controller.abort(reason)
    expect(await result).toBe(reason)
    expect(attempt).toHaveBeenCalledTimes(1)
  })

  it('its sleep timers do not keep a process alive', async () => {
    vi.useFakeTimers()
    let handle: { hasRef?: () => boolean } | undefined
    const realSetTimeout = globalThis.setTimeout
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms: number) => {
      const h = realSetTimeout(fn, ms)
      handle = h as never
      return h
    }) as never)
    const result = retry(async (n) => {
      if (n === 1) throw new NetworkError('down')
      return n
    }, { retries: 1, backoff, random: () => 0.5 })
    await vi.advanceTimersByTimeAsync(0)
    expect(spy).toHaveBeenCalled()
    expect(handle?.hasRef?.()).toBe(false)
    await vi.advanceTimersByTimeAsync(1000)
    await expect(result).resolves.toBe(2)
  })
})
