/** `mergeBatchJobs`: the requests of one queue write become fewer `batch` jobs. */
import { describe, expect, it } from 'vitest'
import { MERGED_JOB_DELIVERIES, mergeBatchJobs, type BatchJob } from '../../../src/collector/delivery/batch-merge.js'
import { BATCH_JOB_OPTIONS } from '../../../src/collector/delivery/bullmq-jobs.js'

const job = (source: string, ...ids: string[]): BatchJob => ({
  name: 'batch',
  data: { s: source, d: ids.map((id) => ['track', `{"messageId":"${id}"}`, id, null]) },
  opts: BATCH_JOB_OPTIONS,
})
const ids = (j: BatchJob) => j.data.d.map((d) => d[2])

describe('mergeBatchJobs', () => {
  it('merges the jobs of one source in order, keeps sources apart, and leaves its input as it was', () => {
    const input = [job('web', 'a', 'b'), job('app', 'x'), job('web', 'c'), job('app', 'y', 'z')]
    const merged = mergeBatchJobs(input)
    expect(merged.map((j) => [j.data.s, ids(j)])).toEqual([
      ['web', ['a', 'b', 'c']],
      ['app', ['x', 'y', 'z']],
    ])
    expect(merged.every((j) => j.name === 'batch' && j.opts === BATCH_JOB_OPTIONS)).toBe(true)
    expect(input.map(ids)).toEqual([['a', 'b'], ['x'], ['c'], ['y', 'z']])
  })

  it(`starts a new job past ${MERGED_JOB_DELIVERIES} deliveries, and never splits a request's own`, () => {
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)
    const merged = mergeBatchJobs([job('web', ...many('a', 60)), job('web', ...many('b', 60)), job('web', ...many('c', 40)), job('web', ...many('d', 150))])
    expect(merged.map((j) => j.data.d.length)).toEqual([60, 100, 150])
    expect(merged.flatMap(ids)).toEqual([...many('a', 60), ...many('b', 60), ...many('c', 40), ...many('d', 150)])
  })
})
