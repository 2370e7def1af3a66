/**
 * `addJobs` (src/collector/delivery/bullmq-jobs.ts), on real Redis and PostgreSQL servers: one job
 * or several, every one is in the server as given (name, data, id, delay), whichever call adds it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { QueueServer } from '../../../src/collector/config.js'
import { addJobs } from '../../../src/collector/delivery/bullmq-jobs.js'
import { bullmqQueue, loadBullmq } from '../../../src/collector/state/drivers.js'
import { startPostgres, startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'

describe.each([
  ['Redis', 'redis', startRedis],
  ['PostgreSQL', 'postgres', startPostgres],
] as const)('addJobs on %s', (_name, kind, start) => {
  let process: QueueServerProcess | undefined
  let queue: import('bullmq').Queue

  beforeAll(async () => {
    process = await start()
    const server: QueueServer = { kind, url: process.url }
    queue = bullmqQueue(await loadBullmq(server), server, 'add-jobs-test')
    await queue.waitUntilReady()
  }, 60_000)

  afterAll(async () => {
    await queue?.close()
    await process?.stop()
  })

  it('one job: added as given', async () => {
    await addJobs(queue, [{ name: 'batch', data: { s: 'web', d: [['track', '{"n":1}', 'm1']] }, opts: { jobId: 'one' } }], kind)
    const job = await queue.getJob('one')
    expect(job?.name).toBe('batch')
    expect(job?.data).toEqual({ s: 'web', d: [['track', '{"n":1}', 'm1']] })
    expect(await job?.getState()).toBe('waiting')
  })

  it('several jobs: every one added, each with its own options (a delay makes it delayed)', async () => {
    await addJobs(queue, [
      { name: 'deliver', data: { s: 'web', b: 'a' }, opts: { jobId: 'a' } },
      { name: 'deliver', data: { s: 'web', b: 'b' }, opts: { jobId: 'b', delay: 60_000 } },
      { name: 'deliver', data: { s: 'app', b: 'c' }, opts: { jobId: 'c' } },
    ], kind)
    const jobs = await Promise.all(['a', 'b', 'c'].map((id) => queue.getJob(id)))
    expect(jobs.map((job) => job?.data.b)).toEqual(['a', 'b', 'c'])
    expect(await Promise.all(jobs.map((job) => job?.getState()))).toEqual(['waiting', 'delayed', 'waiting'])
  })

  it('an id already in the server is not added twice (a retry re-added after a restart)', async () => {
    await addJobs(queue, [{ name: 'deliver', data: { s: 'web', b: 'first' }, opts: { jobId: 'again' } }], kind)
    await addJobs(queue, [
      { name: 'deliver', data: { s: 'web', b: 'second' }, opts: { jobId: 'again' } },
      { name: 'deliver', data: { s: 'web', b: 'other' }, opts: { jobId: 'other' } },
    ], kind)
    expect((await queue.getJob('again'))?.data.b).toBe('first')
    expect(await queue.getJobCountByTypes('waiting', 'delayed')).toBe(6)
  })
})
