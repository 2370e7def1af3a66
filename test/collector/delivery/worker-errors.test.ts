/** What the durable collector does with its BullMQ worker's `error`s (`workerErrors`, src/collector/delivery/worker-errors.ts). */
import { describe, expect, it, vi } from 'vitest'
import { workerErrors } from '../../../src/collector/delivery/worker-errors.js'

describe('workerErrors', () => {
  function handler(processing: string[]) {
    const reported: Error[] = []
    const log = Object.assign(vi.fn(), { enabled: true })
    const onError = workerErrors(new Set(processing), (error) => reported.push(error), log)
    return { onError, reported, log }
  }

  it('a failed lock renewal of a job that has finished here is logged, not reported (the renewal crossed its completion)', () => {
    const { onError, reported, log } = handler(['7'])
    onError(new Error('could not renew lock for job 12'))
    expect(reported).toEqual([])
    expect(log).toHaveBeenCalledWith('queue worker: could not renew lock for job 12, which had just finished here')
  })

  it('a failed lock renewal of a job still being processed here is reported: its lock is lost', () => {
    const { onError, reported } = handler(['12'])
    onError(new Error('could not renew lock for job 12'))
    expect(reported.map((e) => e.message)).toEqual(['could not renew lock for job 12'])
  })

  it('every other worker error is reported', () => {
    const { onError, reported } = handler([])
    onError(new Error('Connection is closed.'))
    expect(reported.map((e) => e.message)).toEqual(['Connection is closed.'])
  })
})
