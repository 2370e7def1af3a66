/**
 * A batch's own `context` and `integrations` are merged under each message's, which must be
 * objects (or absent, or `null`): a message's bad member is the same 400 with or without them.
 */
import { describe, expect, it } from 'vitest'
import { forwardingCollector, post, track, until } from '../helpers.js'

const envelope = { context: { library: { name: 'analytics-go', version: '3.0.0' } }, integrations: { All: true } }

describe('the batch envelope', () => {
  it.each([
    ['context', 'abc', '`"abc"`'],
    ['context', [1, 2], 'an array'],
    ['integrations', 'x', '`"x"`'],
    ['integrations', 7, '`7`'],
  ])('refuses a message whose %s is %j with 400 naming it, with or without an envelope', async (field, value, shown) => {
    const { collector, calls } = forwardingCollector()
    for (const body of [{ batch: [track({ [field]: value })] }, { batch: [track({ [field]: value })], ...envelope }]) {
      const response = await collector.fetch(post(body))
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({
        error: { code: 'VALIDATION', field: `batch[0].${field}`, message: `Expected \`${field}\` to be an object, got ${shown}.` },
      })
    }
    await collector.close()
    expect(calls).toHaveLength(0)
  })

  it("merges the envelope under a message's own members, and alone where the message's are null", async () => {
    const { collector, calls } = forwardingCollector()
    const body = {
      batch: [track({ context: { ip: '1.2.3.4' } }), track({ messageId: 'm-2', context: null, integrations: null })],
      ...envelope,
    }
    expect((await collector.fetch(post(body))).status).toBe(200)
    await until(() => calls.length === 2, 'delivery')
    expect(calls[0].json.context).toEqual({ ip: '1.2.3.4', library: { name: 'analytics-go', version: '3.0.0' } })
    expect(calls[1].json.context).toEqual({ library: { name: 'analytics-go', version: '3.0.0' } })
  })
})
