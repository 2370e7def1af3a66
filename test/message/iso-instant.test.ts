/**
 * `isoInstant`: the instant of an accepted ISO 8601 string, the same in every time zone (an
 * offset-less date-time is UTC, not local time), and the payload time `WebhookDestination` sends.
 *
 * Setting `process.env.TZ` changes the zone on the main thread only: so it does under vitest's
 * default pool (child processes), not on the worker threads StrykerJS runs tests on. There
 * `npm run mutation` (scripts/mutation.mjs) runs everything in one zone away from UTC instead.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { isoInstant, isValidTimestamp } from '../../src/message/validate.js'
import { toWebhookPayload } from '../../src/webhooks/payload.js'

const zone = process.env.TZ
afterEach(() => {
  if (zone === undefined) delete process.env.TZ
  else process.env.TZ = zone
})

describe('isoInstant', () => {
  it.each(['UTC', 'Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata'])('reads every accepted form the same in %s', (tz) => {
    // Node reads TZ again when it is set.
    process.env.TZ = tz
    const at = Date.UTC(2026, 10, 25, 10, 0, 0, 123)
    for (const text of ['2026-11-25T10:00:00.123Z', '2026-11-25T10:00:00.123456', '2026-11-25 10:00:00.123', '2026-11-25t10:00:00.123z', '2026-11-25T12:00:00.123+02', '2026-11-25T12:00:00.123+0200', '2026-11-25T05:00:00.123-05:00']) {
      expect([text, isoInstant(text)]).toEqual([text, at])
    }
    expect(isoInstant('2026-11-25')).toBe(Date.UTC(2026, 10, 25))
    expect(isoInstant('2026-11-25T10:00')).toBe(Date.UTC(2026, 10, 25, 10))
  })

  it('is NaN for what is not an accepted ISO 8601 string', () => {
    for (const text of ['yesterday', '2026', '11/25/2026', '2026-11-25T10', '25/11/2026', '2026-11-25T10:00:00+2', '', 'Z']) expect([text, isoInstant(text)]).toEqual([text, Number.NaN])
    expect(isValidTimestamp('2026-02-30T10:00:00')).toBe(false)
    expect(isValidTimestamp('2026-11-25T10:00:00+02')).toBe(true)
  })

  it("gives WebhookDestination's payload the UTC time of an offset-less timestamp", () => {
    process.env.TZ = 'America/Los_Angeles'
    const payload = toWebhookPayload({ type: 'track', event: 'E', userId: 'u', timestamp: '2026-11-25T10:00:00' })
    expect(payload.timestamp).toBe('2026-11-25T10:00:00.000Z')
  })
})
