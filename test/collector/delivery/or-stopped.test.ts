import { describe, expect, it } from 'vitest'
import { orStopped, STOPPED } from '../../../src/collector/delivery/or-stopped.js'
import { Stop } from '../../../src/transport/stop.js'

describe('orStopped (an attempt the drain may give up on)', () => {
  it("gives the attempt's outcome or error", async () => {
    const stop = new Stop()
    await expect(orStopped(Promise.resolve('delivered'), stop)).resolves.toBe('delivered')
    await expect(orStopped(Promise.reject(new Error('socket hang up')), stop)).rejects.toThrow('socket hang up')
  })

  it('gives STOPPED once the stop aborts, or at once when it already has', async () => {
    const stop = new Stop()
    const never = new Promise<string>(() => {})
    const waiting = orStopped(never, stop)
    stop.abort()
    await expect(waiting).resolves.toBe(STOPPED)
    await expect(orStopped(never, stop)).resolves.toBe(STOPPED)
  })

  it('leaves nothing behind on the stop once an attempt settles (a long-running process does not grow)', async () => {
    const stop = new Stop()
    for (let i = 0; i < 1_000; i++) await orStopped(i % 2 ? Promise.resolve(i) : Promise.reject(new Error(String(i))), stop).catch(() => {})
    expect(stop.size).toBe(0)
    const inFlight = orStopped(new Promise<string>(() => {}), stop)
    expect(stop.size).toBe(1)
    stop.abort()
    await expect(inFlight).resolves.toBe(STOPPED)
  })
})
