import { describe, expect, it } from 'vitest'
import { integrationEnabled } from '../../../src/collector/index.js'
import { forwardingCollector, post, track, until } from '../helpers.js'

describe('integrations rule (Go v2 §4.3)', () => {
  it.each<[unknown, boolean]>([
    [undefined, true],
    [{}, true],
    [{ All: true }, true],
    [{ All: false }, false],
    [{ All: false, Webhooks: true }, true],
    [{ All: false, Webhooks: { option: 1 } }, true],
    [{ Webhooks: false }, false],
    [{ All: true, Webhooks: false }, false],
    [{ All: false, webhooks: true }, false],
    [{ webhooks: false }, true],
    [{ all: false }, true],
    [{ Mixpanel: false }, true],
  ])('%j → %s', (integrations, enabled) => {
    expect(integrationEnabled(integrations)).toBe(enabled)
  })

  it('forwards only the messages the rule lets through, counting the rest as skipped', async () => {
    const { collector, calls } = forwardingCollector()
    const batch = [
      track({ messageId: 'default' }),
      track({ messageId: 'off', integrations: { All: false } }),
      track({ messageId: 'on', integrations: { All: false, Webhooks: true } }),
      track({ messageId: 'lower', integrations: { All: false, webhooks: true } }),
      track({ messageId: 'named-off', integrations: { Webhooks: false } }),
    ]
    expect((await collector.fetch(post({ batch }))).status).toBe(200)
    await until(() => collector.stats().pending === 0 && calls.length === 2, 'deliveries')
    expect(calls.map((c) => c.json.messageId).sort()).toEqual(['default', 'on'])
    expect(collector.stats()).toMatchObject({ received: 5, skipped: 3, forwarded: 2 })
  })

  it('applies the batch envelope integrations under each message', async () => {
    const { collector, calls } = forwardingCollector()
    const body = {
      batch: [track({ messageId: 'a' }), track({ messageId: 'b', integrations: { Webhooks: true } })],
      integrations: { All: false },
    }
    expect((await collector.fetch(post(body))).status).toBe(200)
    await until(() => collector.stats().pending === 0 && calls.length === 1, 'deliveries')
    expect(calls.map((c) => c.json.messageId)).toEqual(['b'])
  })
})
