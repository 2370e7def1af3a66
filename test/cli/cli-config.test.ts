/**
 * The CLI's configuration: sources from --config (with DEBUG=analytics logging and tracking plans),
 * secrets that are never printed in full, and the queue URL from --queue or ANALYTICS_QUEUE_URL.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parseCommand } from '../../src/cli/args.js'
import { basic, receiver, useCli } from './support.js'

const run = useCli()

describe('isomorphic-analytics CLI', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ia-cli-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('reads sources from --config, serves each one, and logs detail with DEBUG=analytics', async () => {
    const hook = await receiver()
    try {
      const config = join(dir, 'config.json')
      writeFileSync(config, JSON.stringify({
        sources: [
          { writeKey: 'WEB', name: 'web', webhooks: { enabled: true, urls: [{ url: hook.url }] } },
          { writeKey: 'APP', name: 'app' },
        ],
      }))
      const cli = run(['collect', '--port', '0', '--config', config], { DEBUG: 'analytics' })
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      const send = (key: string) =>
        fetch(`${url}/v1/identify`, { method: 'POST', headers: { authorization: basic(key) }, body: JSON.stringify({ userId: key }) })
      expect((await send('WEB')).status).toBe(200)
      expect((await send('APP')).status).toBe(200)
      expect((await send('OTHER')).status).toBe(401)
      await hook.until(1)
      expect(JSON.parse(hook.received[0].body)).toMatchObject({ type: 'identify', userId: 'WEB' })
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      // DEBUG=analytics: a log line per request on stderr, with the URL the client used.
      expect(cli.stderr()).toMatch(/^analytics:collector web: accepted 1 message, forwarding 1 payload \(received at [^)]+\) \+\d+ms$/m)
      expect(cli.stderr()).toMatch(/^analytics:collector app: accepted 1 message, forwarding 0 payloads \(received at [^)]+\) \+\d+ms$/m)
      expect(cli.stderr()).toContain(`analytics:collector POST ${url}/v1/identify → 401 UNAUTHORIZED`)
    } finally {
      await hook.close()
    }
  })

  it('--config can carry a source trackingPlan: violations are blocked, counted and logged with the reason', async () => {
    const hook = await receiver()
    try {
      const config = join(dir, 'plan.json')
      writeFileSync(config, JSON.stringify({
        sources: [{
          writeKey: 'WEB',
          name: 'web',
          webhooks: { enabled: true, urls: [{ url: hook.url }] },
          trackingPlan: { events: { 'Order Completed': { type: 'object', required: ['total'], properties: { total: { type: 'number' } } } } },
        }],
      }))
      const cli = run(['collect', '--port', '0', '--config', config], { DEBUG: 'analytics' })
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      const response = await fetch(`${url}/v1/batch`, {
        method: 'POST',
        headers: { authorization: basic('WEB'), 'content-type': 'application/json' },
        body: JSON.stringify({ batch: [
          { type: 'track', event: 'Order Completed', userId: 'u', messageId: 'ok-1', properties: { total: 5 } },
          { type: 'track', event: 'Order Completed', userId: 'u', messageId: 'bad-1', properties: { total: '5' } },
        ] }),
      })
      expect(response.status).toBe(200)
      await hook.until(1)
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      expect(hook.received.map((r) => JSON.parse(r.body).messageId)).toEqual(['ok-1'])
      expect(cli.stderr()).toContain('web: blocked bad-1: Event "Order Completed" does not match the tracking plan: properties.total must be number.')
      expect(cli.stdout()).toMatch(/forwarded 1 · .* · blocked by tracking plans 1/)
    } finally {
      await hook.close()
    }
  })

  it('a --config plan that is not valid JSON Schema exits 2 naming the event', async () => {
    const config = join(dir, 'bad-plan.json')
    writeFileSync(config, JSON.stringify({ sources: [{ writeKey: 'WEB', name: 'web', trackingPlan: { events: { Signup: { type: 'object', requried: ['plan'] } } } }] }))
    const cli = run(['collect', '--port', '0', '--config', config])
    expect(await cli.exit).toBe(2)
    expect(cli.stderr()).toContain('`sources[0].trackingPlan.events["Signup"]` is not a valid JSON Schema: strict mode: unknown keyword: "requried"')
  })

  it('a --config file whose disabled destination holds a bad secret (as a console change once saved) exits 2 naming it', async () => {
    const config = join(dir, 'poisoned.json')
    writeFileSync(config, JSON.stringify({ adminToken: 'admin-token-0123456789', sources: [{ writeKey: 'WEB', name: 'web', webhooks: { enabled: false, sharedSecret: { length: 40 } } }] }))
    const cli = run(['collect', '--port', '0', '--config', config])
    expect(await cli.exit).toBe(2)
    expect(cli.stderr()).toContain('Expected `sources[0].webhooks.sharedSecret` to be a non-empty string, got an object')
  })

  it.each([['a space', 'correct horse battery staple'], ['a character outside visible ASCII', 'token-€-123456']])(
    'an --admin-token with %s (no browser or Bearer header can carry it) exits 2 naming --admin-token',
    async (_, token) => {
      const cli = run(['collect', '--port', '0', '--write-key', 'WEB', '--admin-token', token])
      expect(await cli.exit).toBe(2)
      expect(cli.stderr()).toContain('`--admin-token`')
      expect(cli.stderr()).toContain('visible ASCII')
      expect(cli.stderr()).not.toContain(token)
    },
  )

  it.each([['15 characters', 'Sh0rt-t0ken-abc', /at least 16 characters long, got 15/], ['one repeated character', 'x'.repeat(20), /one character repeated 20 times/]])(
    'an --admin-token of %s (guessable) exits 2 naming --admin-token, without the token',
    async (_, token, reason) => {
      const cli = run(['collect', '--port', '0', '--write-key', 'WEB', '--admin-token', token])
      expect(await cli.exit).toBe(2)
      expect(cli.stderr()).toContain('`--admin-token`')
      expect(cli.stderr()).toMatch(reason)
      expect(cli.stderr()).not.toContain(token)
    },
  )

  it('never prints a write key, shared secret, admin token or URL token in full, even with DEBUG=analytics', async () => {
    const hook = await receiver()
    const [key, secret, token, urlToken] = ['wk_live_0123456789abcd', 'shared-secret-9876wxyz', 'admin-token-5555qrst', 'hook_0123456789']
    try {
      const webhook = `${hook.url}?token=${urlToken}`
      const cli = run(['collect', '--port', '0', '--write-key', key, '--webhook', webhook, '--shared-secret', secret, '--admin-token', token], { DEBUG: 'analytics' })
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      await cli.waitFor(/Press Ctrl\+C to stop/)
      for (const [writeKey, status] of [[key, 200], ['wrong-key-0000', 401]] as const) {
        const response = await fetch(`${url}/v1/batch`, {
          method: 'POST',
          headers: { authorization: basic(writeKey), 'content-type': 'application/json' },
          body: JSON.stringify({ batch: [{ type: 'track', event: 'E', userId: 'u1' }] }),
        })
        expect(response.status).toBe(status)
      }
      expect((await fetch(`${url}/v1/deletions`, { method: 'POST', headers: { authorization: `Bearer ${token}x` }, body: '{}' })).status).toBe(401)
      await hook.until(1)
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      const output = cli.stdout() + cli.stderr()
      expect(cli.stdout()).toContain(`source "default" (write key …abcd) → ${hook.url}?token=…6789 (signed)`)
      expect(cli.stderr()).toContain('analytics:cli source "default": write key …abcd, 1 webhook URL, shared secret …wxyz')
      expect(cli.stderr()).toContain('analytics:cli admin token set (not shown)')
      expect(cli.stderr()).toContain(`analytics:webhooks delivered to ${hook.url}?token=…6789 (200) after 1 attempt`)
      expect(cli.stderr()).toMatch(/analytics:collector /)
      for (const full of [key, secret, token, urlToken, 'wrong-key-0000', btoa(`${key}:`)]) expect(output).not.toContain(full)
    } finally {
      await hook.close()
    }
  })
})

describe('--queue and ANALYTICS_QUEUE_URL', () => {
  const base = ['collect', '--write-key', 'KEY']
  const queueOf = (argv: string[], env = {}) => {
    const command = parseCommand(argv, env)
    return command.kind === 'collect' ? command.args.config.queue : undefined
  }

  it('takes --queue, else ANALYTICS_QUEUE_URL, else none (memory)', () => {
    expect(queueOf([...base, '--queue', 'redis://127.0.0.1:6379'], { ANALYTICS_QUEUE_URL: 'redis://other:6379' })).toBe('redis://127.0.0.1:6379')
    expect(queueOf(base, { ANALYTICS_QUEUE_URL: 'postgres://u@db/x' })).toBe('postgres://u@db/x')
    expect(queueOf(base, { ANALYTICS_QUEUE_URL: '' })).toBeUndefined()
    expect(queueOf(base)).toBeUndefined()
  })

  it('refuses a URL that is no queue server, exit 2, without printing its password', async () => {
    const cli = run([...base, '--queue', 'mysql://u:hunter2@db/x'])
    expect(await cli.exit).toBe(2)
    expect(cli.stderr()).toMatch(/queue.*mysql:\/\/ URL/)
    expect(cli.stderr()).not.toContain('hunter2')
  })
})
