/**
 * `withinMessageLimits` (when a body's messages need no size check of their own), and the depth
 * limit on bodies that hold an integer beyond 2^53 (parsed and written by lossless-json).
 */
import { describe, expect, it } from 'vitest'
import { withinMessageLimits } from '../../../src/collector/ingest/parse.js'
import { forwardingCollector, post, track, until } from '../helpers.js'

const batch = (...messages: unknown[]) => JSON.stringify({ batch: messages, context: { library: { name: 'x' } } })

describe('withinMessageLimits', () => {
  it('holds for a small batch (20 ordinary events)', () => {
    expect(withinMessageLimits(batch(...Array.from({ length: 20 }, () => track())), false)).toBe(true)
  })

  it('does not hold for a body a third of the limit or more, exponent numbers, integers beyond 2^53 or deep nesting', () => {
    expect(withinMessageLimits(batch(track({ properties: { pad: 'x'.repeat(10_900) } })), false)).toBe(false)
    expect(withinMessageLimits(batch(track({ properties: { n: 1e21 } })), false)).toBe(false)
    expect(withinMessageLimits('{"batch":[{"type":"track","n":2E3}]}', false)).toBe(false)
    expect(withinMessageLimits(batch(track()), true)).toBe(false)
    expect(withinMessageLimits(`{"batch":[${'['.repeat(101)}${']'.repeat(101)}]}`, false)).toBe(false)
  })
})

describe('the depth limit, with an integer beyond 2^53 in the body', () => {
  /** A batch whose message nests `levels` deep (the message itself is the first), `leaf` at the bottom. */
  const nested = (levels: number, leaf: string) =>
    `{"batch":[${JSON.stringify(track()).slice(0, -1)},"properties":${'{"a":'.repeat(levels - 2)}{"n":${leaf}}${'}'.repeat(levels - 2)}}]}`

  it.each([101, 150, 3_000, 20_000])('refuses %i levels with 400 VALIDATION naming the member, as without one', async (levels) => {
    const { collector, calls } = forwardingCollector()
    for (const leaf of ['1', '12345678901234567890']) {
      const response = await collector.fetch(post(nested(levels, leaf)))
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error: { code: 'VALIDATION', field: 'batch[0].properties', message: expect.stringMatching(/too deep/) } })
    }
    await collector.close()
    expect(calls).toHaveLength(0)
  })

  it('refuses (400) a body whose member beside its messages nests too deep, which would have cost an int64 its digits', async () => {
    const { collector, calls } = forwardingCollector()
    const body = (levels: number) =>
      `{"batch":[${JSON.stringify(track()).slice(0, -1)},"properties":{"id":9223372036854775807}}],"_debug":${'['.repeat(levels)}${']'.repeat(levels)}}`
    const refused = await collector.fetch(post(body(103)))
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ error: { code: 'VALIDATION', field: 'body', message: expect.stringMatching(/more than 102 levels deep beside its messages/) } })
    // At a depth the exact parser reads, the member is dropped as before and the digits kept.
    expect((await collector.fetch(post(body(90)))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).toContain('"id":9223372036854775807')
    await collector.close()
  })

  it('forwards 100 levels, the digits exact', async () => {
    const { collector, calls } = forwardingCollector()
    expect((await collector.fetch(post(nested(100, '12345678901234567890')))).status).toBe(200)
    await until(() => calls.length === 1, 'delivery')
    expect(calls[0].body).toContain('{"n":12345678901234567890}')
  })
})
