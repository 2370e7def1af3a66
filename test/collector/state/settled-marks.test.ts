/**
 * The settled marks of `batch` jobs (src/collector/state/shared-state.ts) on each real queue
 * server: a mark holds how its payload settled, so a job run again after its process died returns
 * the same letters for the payloads an earlier run settled (src/collector/delivery/bullmq-jobs.ts),
 * and the payloads kept in its completed job say the same outcome (src/collector/replay/kept-jobs.ts).
 */
import { afterEach, describe, expect, it } from 'vitest'
import { SharedState } from '../../../src/collector/state/shared-state.js'
import { QUEUE_SERVERS } from '../../helpers/queue-servers.js'

const running: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const end of running.splice(0).reverse()) await end().catch(() => undefined)
})

describe.each(QUEUE_SERVERS)('settled marks on %s', (_name, start) => {
  it('hold each payload\'s outcome, are read back per job, the first mark stays, and are dropped with their job', async () => {
    const server = await start()
    running.push(() => server.stop())
    const state = new SharedState({ kind: server.url.startsWith('redis') ? 'redis' : 'postgres', url: server.url })
    running.push(() => state.close())

    await state.settle([['job-1@1', 0, 'd'], ['job-1@1', 2, 'f'], ['job-1@1', 3, 'r'], ['job-2@1', 0, '-']], 60_000)
    // A second mark of the same payload (a run that overlapped) does not replace the first.
    await state.settle([['job-1@1', 0, 'f']], 60_000)

    expect(await state.settledOf('job-1@1', 4)).toEqual(new Map([[0, 'd'], [2, 'f'], [3, 'r']]))
    // Only the job's first `count` payloads are asked for.
    expect(await state.settledOf('job-1@1', 3)).toEqual(new Map([[0, 'd'], [2, 'f']]))
    expect(await state.settledOf('job-2@1', 1)).toEqual(new Map([[0, '-']]))

    await state.forget([['job-1@1', 4]])
    expect(await state.settledOf('job-1@1', 4)).toEqual(new Map())
    expect(await state.settledOf('job-2@1', 1)).toEqual(new Map([[0, '-']]))
  })
})
