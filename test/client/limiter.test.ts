import { describe, expect, it } from 'vitest'
import { Limiter } from '../../src/client/delivery.js'

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

  it('rejects every waiter with the signal’s reason when it aborts, with one listener for all', async () => {
    const controller = new AbortController()
    let listeners = 0
    const add = controller.signal.addEventListener.bind(controller.signal)
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add
    const limiter = new Limiter(1, controller.signal)
    await limiter.acquire()
    expect(listeners).toBe(1)
    const waiters = [limiter.acquire(), limiter.acquire(), limiter.acquire()]
    expect(listeners).toBe(1)
    const reason = new Error('stop')
    controller.abort(reason)
    for (const waiter of waiters) await expect(waiter).rejects.toBe(reason)
    // Aborted: no slot is granted any more, even a free one.
    limiter.release()
    await expect(limiter.acquire()).rejects.toBe(reason)
  })

  it('rejects at once with an already aborted signal', async () => {
    const controller = new AbortController()
    controller.abort(new Error('already'))
    const limiter = new Limiter(5, controller.signal)
    await expect(limiter.acquire()).rejects.toThrow('already')
    // Without a signal, 5 can be acquired at once.
    const free = new Limiter(5)
    for (let i = 0; i < 5; i++) await free.acquire()
  })

  it('frees a slot released with no one waiting, for the next acquire at once', async () => {
    const limiter = new Limiter(1)
    await limiter.acquire()
    limiter.release()
    let held = false
    void limiter.acquire().then(() => (held = true))
    await tick()
    expect(held).toBe(true)
  })

  it('wake() lets every waiter go at once without a slot (resolved with `true`), and the slots stay taken', async () => {
    const limiter = new Limiter(1)
    expect(await limiter.acquire()).toBeUndefined()
    const woken = [limiter.acquire(), limiter.acquire()]
    limiter.wake()
    expect(await Promise.all(woken)).toEqual([true, true])
    let held = false
    void limiter.acquire().then(() => (held = true))
    await tick()
    expect(held).toBe(false)
    limiter.release()
    await tick()
    expect(held).toBe(true)
  })
})
