import { describe, expect, it } from 'vitest'
import { Limiter } from '../../src/client/limiter.js'

const tick = () => new Promise((r) => setTimeout(r, 0))

describe('Limiter', () => {
  it('grants up to `limit` slots at once, then serves waiters in order', async () => {
    const limiter = new Limiter(2)
    const order: number[] = []
    await limiter.acquire()
    await limiter.acquire()
    const waiters = [3, 4, 5].map((n) => limiter.acquire().then(() => order.push(n)))
    await tick()
    expect(order).toEqual([])
    limiter.release()
    await tick()
    expect(order).toEqual([3])
    limiter.release()
    limiter.release()
    await Promise.all(waiters)
    expect(order).toEqual([3, 4, 5])
  })

  it('rejects with the signal’s reason when aborted while waiting, and skips that waiter', async () => {
    const limiter = new Limiter(1)
    await limiter.acquire()
    const controller = new AbortController()
    const aborted = limiter.acquire(controller.signal)
    let granted = false
    const next = limiter.acquire().then(() => (granted = true))
    const reason = new Error('stop')
    controller.abort(reason)
    await expect(aborted).rejects.toBe(reason)
    limiter.release()
    await next
    expect(granted).toBe(true)
  })

  it('rejects at once with an already aborted signal', async () => {
    const limiter = new Limiter(5)
    const controller = new AbortController()
    controller.abort(new Error('already'))
    await expect(limiter.acquire(controller.signal)).rejects.toThrow('already')
    // The slot was not taken: 5 more can be acquired at once.
    for (let i = 0; i < 5; i++) await limiter.acquire()
  })
})
