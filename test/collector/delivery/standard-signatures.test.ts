/**
 * A source's `webhooks.standardSecrets`: each forwarded payload carries Standard Webhooks headers
 * that the official `standardwebhooks` package accepts, beside `X-Signature`; a bad secret is a
 * ConfigError naming the source's option; the CLI's `--standard-secret` sets it (twice: rotation).
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { parseCommand } from '../../../src/cli/args.js'
import { createCollector } from '../../../src/collector/index.js'
import { forwardingCollector, KEY, post, track, until } from '../helpers.js'

const secret = () => `whsec_${randomBytes(24).toString('base64')}`

describe('webhooks.standardSecrets', () => {
  it('signs each forwarded payload both ways; the official verifier accepts it under either secret', async () => {
    const [oldSecret, newSecret] = [secret(), secret()]
    const { collector, calls } = forwardingCollector({
      sources: [{ writeKey: KEY, name: 'web', webhooks: { urls: [{ url: 'https://hooks.test/in' }], sharedSecret: 'shh', standardSecrets: [oldSecret, newSecret] } }],
    })
    expect((await collector.fetch(post({ batch: [track({ messageId: 'std-1' }), track({ messageId: 'std-2' })] }))).status).toBe(200)
    await until(() => calls.length === 2, 'two deliveries')
    for (const call of calls) {
      expect(call.headers['x-signature']).toMatch(/^[0-9a-f]{40}$/)
      for (const key of [oldSecret, newSecret]) expect(new Webhook(key).verify(call.body, call.headers)).toEqual(call.json)
    }
    expect(calls[0].headers['webhook-id']).not.toBe(calls[1].headers['webhook-id'])
    await collector.close()
  })

  it('a bad secret is a ConfigError naming the source option', () => {
    const config = (standardSecrets: unknown) => ({ sources: [{ writeKey: KEY, name: 'web', webhooks: { urls: [{ url: 'https://hooks.test/in' }], standardSecrets } }] }) as Parameters<typeof createCollector>[0]
    expect(() => createCollector(config(['s3cret']))).toThrow(/`sources\[0\]\.webhooks\.standardSecrets\[0\]`/)
    expect(() => createCollector(config([secret(), secret(), secret()]))).toThrow(/`sources\[0\]\.webhooks\.standardSecrets`/)
  })

  it('the CLI: --standard-secret, given once or twice', () => {
    const [a, b] = [secret(), secret()]
    const command = parseCommand(['collect', '--write-key', 'K', '--webhook', 'https://h.test/', '--standard-secret', a, '--standard-secret', b])
    expect(command.kind === 'collect' && command.args.config.sources[0].webhooks).toMatchObject({ standardSecrets: [a, b] })
    expect(() => parseCommand(['collect', '--write-key', 'K', '--standard-secret', a])).toThrow(/--standard-secret apply to --webhook URLs/)
  })
})
