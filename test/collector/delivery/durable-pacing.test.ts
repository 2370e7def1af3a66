/**
 * Two in-process helpers: `Pacer` (attempts held back while this process is accepting requests;
 * both modes, see memory-mode.test.ts for the memory queue's use of it) and the durable mode's
 * `CoalescedWrites` (requests that arrive during a write share the next).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { CoalescedWrites } from '../../../src/collector/delivery/coalesced-writes.js'
import { eventLoopSaturated, Pacer } from '../../../src/collector/delivery/pacer.js'

describe('Pacer', () => {
  beforeEach(() => vi.useFakeTimers())
  afterEach(() => vi.useRealTimers())

  /** `wait` (an admit or a turn) stays pending while every place is taken, and resolves once one is released. */
  async function resolvesOnRelease(pacer: Pacer, wait: Promise<void>): Promise<void> {
    let done = false
    void wait.then(() => (done = true))
    await vi.advanceTimersByTimeAsync(1_000)
    expect(done).toBe(false)
    pacer.release()
    await vi.advanceTimersByTimeAsync(0)
    expect(done).toBe(true)
  }

  it('admits up to `concurrency` attempts, the next one when one is released', async () => {
    const pacer = new Pacer(2, () => true, 1, 50)
    expect(pacer.admit()).toBeUndefined()
    expect(pacer.admit()).toBeUndefined()
    await resolvesOnRelease(pacer, pacer.admit()!)
  })

  it('turn(): resolves when an attempt could start, keeping no place (the next admit still gets one)', async () => {
    const pacer = new Pacer(1, () => true, 1, 50)
    expect(pacer.turn()).toBeUndefined()
    expect(pacer.admit()).toBeUndefined()
    await resolvesOnRelease(pacer, pacer.turn()!)
    // The turn gave its place back: an attempt is admitted at once.
    expect(pacer.admit()).toBeUndefined()
  })

  it('while requests are being taken in on a saturated event loop, only `busy` at once; all of them once ingest pauses for `quietMs`', async () => {
    const pacer = new Pacer(4, () => true, 1, 50)
    pacer.ingestStarted()
    expect(pacer.admit()).toBeUndefined()
    const admitted: number[] = []
    for (const n of [2, 3, 4]) void pacer.admit()!.then(() => admitted.push(n))
    // A queue write that takes long: ingest is still under way, attempts still wait.
    await vi.advanceTimersByTimeAsync(200)
    expect(admitted).toEqual([])
    pacer.ingestEnded('accepted')
    await vi.advanceTimersByTimeAsync(30)
    pacer.ingestStarted()
    pacer.ingestEnded('accepted')
    await vi.advanceTimersByTimeAsync(30)
    expect(admitted).toEqual([])
    await vi.advanceTimersByTimeAsync(50)
    expect(admitted).toEqual([2, 3, 4])
  })

  it('holds back all but one attempt by default while ingest saturates the loop (of 64)', async () => {
    const pacer = new Pacer(64, () => true)
    pacer.ingestStarted()
    pacer.ingestEnded('accepted')
    expect(pacer.admit()).toBeUndefined()
    let second = false
    void pacer.admit()!.then(() => (second = true))
    await vi.advanceTimersByTimeAsync(10)
    expect(second).toBe(false)
    // The one attempt allowed finishes: the next one goes.
    pacer.release()
    await vi.advanceTimersByTimeAsync(0)
    expect(second).toBe(true)
  })

  it('held back, each attempt starts at least `spacingMs` after the one before, even when the one before is over', async () => {
    const pacer = new Pacer(64, () => true, 1, 50, 1_000, 5)
    pacer.ingestStarted()
    const started: number[] = []
    expect(pacer.admit()).toBeUndefined()
    pacer.release()
    for (const n of [2, 3]) void pacer.admit()!.then(() => started.push(n))
    // The first is over, but 5 ms have not passed since it started.
    await vi.advanceTimersByTimeAsync(4)
    expect(started).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(started).toEqual([2])
    pacer.release()
    await vi.advanceTimersByTimeAsync(4)
    expect(started).toEqual([2])
    await vi.advanceTimersByTimeAsync(1)
    expect(started).toEqual([2, 3])
    // A turn (work that leads to attempts) waits for the spacing too.
    pacer.release()
    let turned = false
    void pacer.turn()!.then(() => (turned = true))
    await vi.advanceTimersByTimeAsync(4)
    expect(turned).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(turned).toBe(true)
    // Not held back (ingest paused for `quietMs`): no spacing, all at once.
    pacer.ingestEnded('accepted')
    await vi.advanceTimersByTimeAsync(50)
    expect([pacer.admit(), pacer.admit(), pacer.admit()]).toEqual([undefined, undefined, undefined])
  })

  it('held back by an attempt in flight (not by the spacing), it looks again when that attempt ends or ingest may have paused, not every `spacingMs`', async () => {
    const pacer = new Pacer(64, () => true, 1, 50, 1_000, 5)
    pacer.ingestStarted()
    expect(pacer.admit()).toBeUndefined()
    const timers = vi.spyOn(globalThis, 'setTimeout')
    let started = false
    void pacer.admit()!.then(() => (started = true))
    await vi.advanceTimersByTimeAsync(40)
    expect(started).toBe(false)
    expect(timers).toHaveBeenCalledTimes(1)
    // The attempt ends: the next starts (the spacing is long over).
    pacer.release()
    await vi.advanceTimersByTimeAsync(0)
    expect(started).toBe(true)
    timers.mockRestore()
  })

  it('a request refused (backlog full) does not hold attempts back: they drain the backlog', async () => {
    const pacer = new Pacer(3, () => true, 1, 50)
    pacer.ingestStarted()
    pacer.ingestEnded('refused')
    expect([pacer.admit(), pacer.admit(), pacer.admit()]).toEqual([undefined, undefined, undefined])
  })

  it('after a refusal, requests still accepted hold nothing back for `overloadMs`; then pacing is back', async () => {
    const pacer = new Pacer(3, () => true, 1, 50, 1_000)
    pacer.ingestStarted()
    pacer.ingestEnded('refused')
    await vi.advanceTimersByTimeAsync(900)
    // Overloaded: each freed place takes in a request; attempts keep full concurrency.
    pacer.ingestStarted()
    pacer.ingestEnded('accepted')
    expect([pacer.admit(), pacer.admit(), pacer.admit()]).toEqual([undefined, undefined, undefined])
    for (let i = 0; i < 3; i++) pacer.release()
    await vi.advanceTimersByTimeAsync(200)
    // No refusal for 1.1 s: a request accepted now is a burst again, one attempt at a time.
    pacer.ingestStarted()
    pacer.ingestEnded('accepted')
    expect(pacer.admit()).toBeUndefined()
    expect(pacer.admit()).toBeInstanceOf(Promise)
  })

  it('holds nothing back while requests are accepted when the event loop has time to spare (slow receivers)', () => {
    const pacer = new Pacer(3, () => false, 1, 50)
    pacer.ingestStarted()
    pacer.ingestEnded('accepted')
    expect([pacer.admit(), pacer.admit(), pacer.admit()]).toEqual([undefined, undefined, undefined])
  })
})

describe('eventLoopSaturated', () => {
  it('is true after ≥ 100 ms of a busy event loop, false after ≥ 100 ms of an idle one', async () => {
    const saturated = eventLoopSaturated()
    // Measuring the event loop itself: its own (real) time, a tenth of a second each way.
    const spinUntil = Date.now() + 120
    while (Date.now() < spinUntil);
    expect(saturated()).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 120))
    expect(saturated()).toBe(false)
  })

  it('is false, and never throws, where `performance` is a stand-in that measures nothing (fake timers)', async () => {
    vi.useFakeTimers()
    try {
      const saturated = eventLoopSaturated()
      await vi.advanceTimersByTimeAsync(150)
      expect(saturated()).toBe(false)
      await vi.advanceTimersByTimeAsync(150)
      expect(saturated()).toBe(false)
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('CoalescedWrites', () => {
  it('writes alone when idle; what arrives during a write goes together in the next one', async () => {
    const writes: number[][] = []
    const gates: Array<() => void> = []
    const coalesced = new CoalescedWrites<number>((items) => {
      writes.push(items)
      return new Promise<void>((resolve) => gates.push(resolve))
    })
    const done: number[] = []
    const first = coalesced.write([1]).then(() => done.push(1))
    const second = coalesced.write([2, 3]).then(() => done.push(2))
    const third = coalesced.write([4]).then(() => done.push(4))
    expect(writes).toEqual([[1]])
    gates[0]()
    await first
    expect(done).toEqual([1])
    await vi.waitFor(() => expect(writes).toEqual([[1], [2, 3, 4]]))
    gates[1]()
    await Promise.all([second, third])
    expect(done).toEqual([1, 2, 4])
  })

  it('a failed write rejects exactly the callers it carried; the next write goes on', async () => {
    let calls = 0
    const coalesced = new CoalescedWrites<string>(async (items) => {
      if (calls++ === 0) throw new Error(`server gone (${items.join(',')})`)
    })
    const a = coalesced.write(['a'])
    const b = coalesced.write(['b'])
    await expect(a).rejects.toThrow('server gone (a)')
    await expect(b).resolves.toBeUndefined()
  })
})
