import { describe, expect, it } from 'vitest'
import { ConfigError, createCollector, type CollectorConfig } from '../../src/collector/index.js'

const source = { writeKey: 'K1', name: 'web' }
const hooks = (urls: unknown[], extra: Record<string, unknown> = {}) => ({ ...source, webhooks: { enabled: true, urls, ...extra } })

function configError(config: unknown): ConfigError {
  try {
    createCollector(config as CollectorConfig)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('expected a ConfigError')
}

describe('createCollector config', () => {
  it.each<[string, unknown, string, RegExp]>([
    ['no config', undefined, 'config', /an object/],
    ['no sources', {}, 'sources', /non-empty array/],
    ['empty sources', { sources: [] }, 'sources', /non-empty array/],
    ['a source that is not an object', { sources: ['K'] }, 'sources[0]', /object/],
    ['a missing write key', { sources: [{ name: 'web' }] }, 'sources[0].writeKey', /non-empty string/],
    ['an empty name', { sources: [{ writeKey: 'K', name: '' }] }, 'sources[0].name', /non-empty string/],
    ['a repeated write key', { sources: [source, { writeKey: 'K1', name: 'app' }] }, 'sources[1].writeKey', /repeats/],
    ['a repeated name', { sources: [source, { writeKey: 'K2', name: 'web' }] }, 'sources[1].name', /repeats/],
    ['an unknown option', { sources: [source], adminTokn: 'x' }, 'adminTokn', /Unknown option/],
    ['an unknown source option', { sources: [{ ...source, webhook: {} }] }, 'sources[0].webhook', /Unknown option/],
    ['an empty admin token', { sources: [source], adminToken: '' }, 'adminToken', /non-empty string/],
    ['an admin token with a space (a passphrase)', { sources: [source], adminToken: 'correct horse battery staple' }, 'adminToken', /visible ASCII .*character 8 is a space/],
    ['an admin token with a character a browser cannot send', { sources: [source], adminToken: 'token-€-123456' }, 'adminToken', /visible ASCII .*character 7 is not ASCII/],
    ['an admin token with Latin-1 (curl and browsers send other bytes)', { sources: [source], adminToken: 'pässwört-123456' }, 'adminToken', /visible ASCII/],
    ['an admin token with a control character', { sources: [source], adminToken: 'abc\tdef' }, 'adminToken', /visible ASCII/],
    ['a one-character admin token', { sources: [source], adminToken: 'a' }, 'adminToken', /^Expected `adminToken` to be at least 16 characters long, got 1: a short token can be guessed\. Make one with `openssl rand -hex 32`\./],
    ['a 15-character admin token', { sources: [source], adminToken: 'admin-token-123' }, 'adminToken', /at least 16 characters long, got 15/],
    ['an admin token of one repeated character', { sources: [source], adminToken: 'a'.repeat(40) }, 'adminToken', /^Expected `adminToken` to be random, got one character repeated 40 times\./],
    ['a non-boolean unsafeShortAdminToken', { sources: [source], adminToken: 'a', unsafeShortAdminToken: 'yes' }, 'unsafeShortAdminToken', /a boolean/],
    ['a non-boolean trustProxy', { sources: [source], trustProxy: 1 }, 'trustProxy', /a boolean/],
    ['an enabled destination without URLs', { sources: [hooks([])] }, 'sources[0].webhooks.urls', /at least one URL/],
    ['urls that are not an array', { sources: [hooks('https://x' as never)] }, 'sources[0].webhooks.urls', /array/],
    ['a non-http webhook URL', { sources: [hooks([{ url: 'ftp://x.test/' }])] }, 'sources[0].webhooks.urls[0].url', /http/],
    ['a relative webhook URL', { sources: [hooks([{ url: '/hook' }])] }, 'sources[0].webhooks.urls[0].url', /URL/],
    ['six webhook URLs', { sources: [hooks(Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.test/` })))] }, 'sources[0].webhooks.urls', /1 to 5/],
    ['a header with CR/LF', { sources: [hooks([{ url: 'https://h.test/', headers: { 'X-A': 'a\r\nb' } }])] }, 'sources[0].webhooks.urls[0].headers', /CR/],
    ['a header overriding Content-Type', { sources: [hooks([{ url: 'https://h.test/', headers: { 'content-type': 'x' } }])] }, 'sources[0].webhooks.urls[0].headers', /may not be overridden/],
    ['an empty shared secret', { sources: [hooks([{ url: 'https://h.test/' }], { sharedSecret: '' })] }, 'sources[0].webhooks.sharedSecret', /non-empty/],
    ['a disabled destination with a secret that is an object', { sources: [{ ...source, webhooks: { enabled: false, sharedSecret: { length: 40 } } }] }, 'sources[0].webhooks.sharedSecret', /non-empty string/],
    ['a disabled destination with a secret that is a number', { sources: [{ ...source, webhooks: { enabled: false, sharedSecret: 12345 } }] }, 'sources[0].webhooks.sharedSecret', /non-empty string/],
    ['a disabled destination with an empty secret', { sources: [{ ...source, webhooks: { enabled: false, sharedSecret: '' } }] }, 'sources[0].webhooks.sharedSecret', /non-empty string/],
    ['a disabled destination with a non-http URL', { sources: [{ ...source, webhooks: { enabled: false, urls: [{ url: 'ftp://x.test/' }] } }] }, 'sources[0].webhooks.urls[0].url', /http/],
    ['a URL given twice', { sources: [hooks([{ url: 'https://h.test/a' }, { url: 'https://b.test/' }, { url: 'HTTPS://H.TEST/a' }])] }, 'sources[0].webhooks.urls[2].url', /repeats `sources\[0\]\.webhooks\.urls\[0\]\.url`/],
    ['a URL given twice while disabled', { sources: [{ ...source, webhooks: { enabled: false, urls: [{ url: 'https://h.test/' }, { url: 'https://h.test/' }] } }] }, 'sources[0].webhooks.urls[1].url', /repeats/],
    ['a negative drain timeout', { sources: [source], drainTimeout: -1 }, 'drainTimeout', /integer/],
    ['a settings store without save', { sources: [source], settings: { kind: 'file', durable: true } }, 'settings', /settings store/],
    ['a settings store of an unknown kind', { sources: [source], settings: { kind: 'disk', durable: true, save: async () => true } }, 'settings', /settings store/],
    ['a settings store whose watch is not a function', { sources: [source], settings: { kind: 'queue', durable: true, save: async () => true, watch: 'redis' } }, 'settings', /load\?, watch\?/],
    ['a queue that is not a URL', { sources: [source], queue: 'redis server' }, 'queue', /redis:\/\/.*not a URL/],
    ['a queue URL of another scheme', { sources: [source], queue: 'mysql://u:hunter2@db/x' }, 'queue', /got a mysql:\/\/ URL/],
    ['a queue that is not a string', { sources: [source], queue: 6379 }, 'queue', /redis:\/\//],
    ['a queue URL without a host', { sources: [source], queue: 'postgres://' }, 'queue', /naming its host/],
    ['a queue URL with a bad % escape', { sources: [source], queue: 'postgres://u:%ZZ@db/x' }, 'queue', /bad escape in its password/],
    ['a Redis queue URL whose path is no database number', { sources: [source], queue: 'redis://127.0.0.1:6379/analytics' }, 'queue', /database number \(`\/0`\) or nothing, got `\/analytics`/],
    ['a Redis queue URL with a negative database', { sources: [source], queue: 'redis://127.0.0.1:6379/-1' }, 'queue', /database number/],
  ])('%s → ConfigError naming %s', (_, config, option, message) => {
    const error = configError(config)
    expect(error.option).toBe(option)
    expect(error.message).toMatch(message)
    expect(error.message).toContain(option === 'config' ? 'config' : option)
  })

  it.each<[string, unknown, string]>([
    ['writeky', { sources: [{ writeky: 'K', name: 'web' }] }, 'Unknown option `sources[0].writeky` (did you mean `sources[0].writeKey`?); known: writeKey, name, webhooks, trackingPlan.'],
    ['trakingPlan', { sources: [{ ...source, trakingPlan: { events: {} } }] }, 'Unknown option `sources[0].trakingPlan` (did you mean `sources[0].trackingPlan`?); known: writeKey, name, webhooks, trackingPlan.'],
    ['webhooks.url', { sources: [{ ...source, webhooks: { url: [] } }] }, 'Unknown option `sources[0].webhooks.url` (did you mean `sources[0].webhooks.urls`?); known: enabled, urls, sharedSecret, standardSecrets, timeout, retryWindow.'],
    ['urls[0].header', { sources: [hooks([{ url: 'https://h.test/', header: {} }])] }, 'Unknown option `sources[0].webhooks.urls[0].header` (did you mean `sources[0].webhooks.urls[0].headers`?); known: url, headers.'],
    ['trackingPlan.violation', { sources: [{ ...source, trackingPlan: { events: {}, violation: 'allow' } }] }, 'Unknown option `sources[0].trackingPlan.violation` (did you mean `sources[0].trackingPlan.violations`?); known: events, unplanned, violations.'],
    ['a top-level key', { sources: [source], drainTimout: 5 }, 'Unknown option `drainTimout` (did you mean `drainTimeout`?); known: sources, adminToken, unsafeShortAdminToken, trustProxy, allowPrivateWebhookUrls, fetch, drainTimeout, retention, deliveryConcurrency, maxPendingDeliveries, queue, debug, onError, settings, disableAfter.'],
    ['a key nothing is close to', { sources: [{ ...source, colour: 'red' }] }, 'Unknown option `sources[0].colour`; known: writeKey, name, webhooks, trackingPlan.'],
  ])('guesses a mistyped key at any depth: %s', (_, config, message) => {
    expect(configError(config).message).toBe(message)
  })

  it('never repeats an admin token in its error', () => {
    expect(configError({ sources: [source], adminToken: 'correct horse battery staple' }).message).not.toContain('horse')
  })

  it('never repeats a queue URL (it may hold a password) in its error', () => {
    expect(configError({ sources: [source], queue: 'mysql://u:hunter2@db/x' }).message).not.toContain('hunter2')
  })

  it('an enabled destination without URLs is said so: urls missing, or empty (not "an array")', () => {
    expect(configError({ sources: [{ ...source, webhooks: { enabled: true } }] }).message).toBe(
      'Expected `sources[0].webhooks.urls` to hold at least one URL when the destination is enabled, got `undefined`.',
    )
    expect(configError({ sources: [hooks([])] }).message).toBe(
      'Expected `sources[0].webhooks.urls` to hold at least one URL when the destination is enabled, got `[]`.',
    )
  })

  it('accepts a disabled destination without URLs, and a source without webhooks', () => {
    const collector = createCollector({
      sources: [source, { writeKey: 'K2', name: 'app', webhooks: { enabled: false } }],
    })
    expect(collector.stats().pending).toBe(0)
  })

  it('enables a destination whose urls are given and enabled is omitted', async () => {
    const calls: string[] = []
    const collector = createCollector({
      sources: [{ ...source, webhooks: { urls: [{ url: 'https://h.test/' }] } }],
      fetch: async (url) => (calls.push(url), new Response('ok')),
    })
    const dispatch = collector.requestDeletion({ userId: 'u1' })
    expect(await dispatch.settled).toEqual({ delivered: 1, failed: 0 })
    expect(calls).toEqual(['https://h.test/'])
  })
})
