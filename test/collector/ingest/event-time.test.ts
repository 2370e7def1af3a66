/**
 * The tracking API's time rule at its edges: an `originalTimestamp` (alone, or corrected by
 * `sentAt`) that gives a time a four-digit year cannot write is a 400 naming it, and a request
 * refused after its messages' ids were claimed for de-duplication lets them go, so the sender's
 * retry is forwarded, not counted a duplicate.
 */
import { describe, expect, it } from 'vitest'
import { forwardingCollector, post, track, until } from '../helpers.js'

const untimed = (extra: Record<string, unknown>) => {
  const { timestamp: _, ...message } = track(extra)
  return message
}

describe('event time at the edges of the calendar', () => {
  it.each([
    ['originalTimestamp in the year 10000 (by its offset)', { originalTimestamp: '9999-12-31T23:00:00-02:00' }, undefined, 'batch[0].originalTimestamp'],
    ['originalTimestamp before the year 0000 (by its offset)', { originalTimestamp: '0000-01-01T00:30:00+01:00' }, undefined, 'batch[0].originalTimestamp'],
    ['originalTimestamp corrected by sentAt past the year 9999', { originalTimestamp: '9999-12-31T23:59:59Z' }, '2026-11-22T10:00:00Z', 'batch[0].originalTimestamp'],
  ])('%s: 400 naming it, not a 500', async (_name, extra, sentAt, field) => {
    const { collector, calls } = forwardingCollector()
    const response = await collector.fetch(post({ batch: [untimed(extra)], ...(sentAt && { sentAt }) }))
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { code: 'VALIDATION', field, message: expect.stringMatching(/to give a time in the years 0000 to 9999\.$/) } })
    await collector.close()
    expect(calls).toHaveLength(0)
  })

  it('a time at the last millisecond of 9999 is kept', async () => {
    const { collector, calls } = forwardingCollector()
    expect((await collector.fetch(post({ batch: [untimed({ originalTimestamp: '9999-12-31T23:59:59.999Z' })] }))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).toContain('"timestamp":"9999-12-31T23:59:59.999Z"')
    await collector.close()
  })
})

describe('a batch with one message the time rule refuses', () => {
  it('is refused whole, and the good message sent again on its own is forwarded (it was a 500 that kept its id claimed)', async () => {
    const { collector, calls } = forwardingCollector()
    const refused = await collector.fetch(post({ batch: [track({ messageId: 'm-ok' }), untimed({ messageId: 'm-bad', originalTimestamp: '9999-12-31T23:00:00-02:00' })] }))
    expect(refused.status).toBe(400)
    const retried = await collector.fetch(post({ batch: [track({ messageId: 'm-ok' })] }))
    expect(retried.status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(collector.stats()).toMatchObject({ deduplicated: 0 })
    await collector.close()
  })
})
