import { afterEach, describe, expect, it, vi } from 'vitest'
import { formatProgress, startProgress } from '../../src/cli/progress.js'
import type { CollectorStats } from '../../src/collector/index.js'

const zero: CollectorStats = { requests: 0, rejected: 0, received: 0, skipped: 0, blocked: 0, metrics: 0, lastReceivedAt: undefined, forwarded: 0, failed: 0, retrying: 0, pending: 0, retries: 0, deduplicated: 0 }

afterEach(() => vi.useRealTimers())

describe('progress', () => {
  it('formats received / forwarded / retrying / failed on one line', () => {
    expect(formatProgress({ ...zero, received: 120, forwarded: 118, retrying: 1, failed: 1, pending: 1, rejected: 3 })).toBe(
      'received 120 · forwarded 118 · retrying 1 · failed 1 · pending 1 · rejected requests 3',
    )
    expect(formatProgress({ ...zero, received: 1, lastReceivedAt: '2026-11-23T12:00:00.000Z' })).toMatch(/ · last received at 2026-11-23T12:00:00\.000Z$/)
  })

  it('with a queue server, says which counts are this process\'s and which are every process\'s', () => {
    expect(formatProgress({ ...zero, received: 20, forwarded: 15, pending: 40, retrying: 2, blocked: 1 }, true)).toBe(
      'this process: received 20 · forwarded 15 · failed 0 · rejected requests 0 · blocked by tracking plans 1 | all processes: pending 40 · retrying 2',
    )
  })

  it('on a terminal, rewrites one line in place and clears it on stop', async () => {
    vi.useFakeTimers()
    const writes: string[] = []
    let stats = zero
    const progress = startProgress({ write: (t) => writes.push(t), inPlace: true, intervalMs: 5_000, stats: () => stats })
    expect(writes).toEqual([`\r\x1b[2K${formatProgress(zero)}`])
    stats = { ...zero, received: 5 }
    await vi.advanceTimersByTimeAsync(250)
    expect(writes[1]).toBe(`\r\x1b[2K${formatProgress(stats)}`)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(writes).toHaveLength(2) // unchanged counts are not rewritten
    progress.stop()
    expect(writes[2]).toBe('\r\x1b[2K')
    await vi.advanceTimersByTimeAsync(1_000)
    expect(writes).toHaveLength(3)
  })

  it('elsewhere, prints a plain timestamped line per interval when the counts changed', async () => {
    vi.useFakeTimers()
    const writes: string[] = []
    let stats = zero
    const progress = startProgress({
      write: (t) => writes.push(t), inPlace: false, intervalMs: 5_000, stats: () => stats,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
    })
    expect(writes).toEqual([])
    await vi.advanceTimersByTimeAsync(5_000)
    expect(writes).toEqual([`2026-11-22T10:00:00.000Z ${formatProgress(zero)}\n`])
    await vi.advanceTimersByTimeAsync(5_000)
    expect(writes).toHaveLength(1)
    stats = { ...zero, forwarded: 2 }
    await vi.advanceTimersByTimeAsync(5_000)
    expect(writes[1]).toContain('forwarded 2')
    expect(writes.every((w) => !w.includes('\r'))).toBe(true)
    progress.stop()
  })
})
