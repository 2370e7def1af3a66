/**
 * The emitter the client and WebhookDestination share: a payload is made only for listeners
 * (the client emits `'flush'` for every batch, and most clients listen to nothing), once for
 * all of them; a listener that throws is reported and the others still run.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Emitter } from '../src/emitter.js'

type Events = { flush: { n: number }; error: Error }

afterEach(() => vi.restoreAllMocks())

describe('Emitter.emit', () => {
  it('makes no payload when nobody listens, and says there was no listener', () => {
    const events = new Emitter<Events>(['flush', 'error'])
    const make = vi.fn(() => ({ n: 1 }))
    expect(events.emit('flush', make)).toBe(0)
    expect(make).not.toHaveBeenCalled()
  })

  it('makes the payload once for every listener, even when one of them throws', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const events = new Emitter<Events>(['flush', 'error'])
    const seen: Array<{ n: number }> = []
    events.on('flush', (p) => seen.push(p))
    events.on('flush', () => {
      throw new Error('listener bug')
    })
    events.on('flush', (p) => seen.push(p))
    const make = vi.fn(() => ({ n: 2 }))
    expect(events.emit('flush', make)).toBe(3)
    expect(make).toHaveBeenCalledTimes(1)
    expect(seen).toEqual([{ n: 2 }, { n: 2 }])
    expect(seen[0]).toBe(seen[1])
    expect(console.error).toHaveBeenCalledWith("isomorphic-analytics: a 'flush' listener threw:", expect.any(Error))
  })
})
