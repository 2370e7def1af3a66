/**
 * The CLI as a real child process (built by ./support.ts): --help, --version, refused arguments,
 * a basic collect that forwards signed payloads and stops on SIGTERM, and a port that is taken.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ADMIN_ENDPOINTS } from '../../src/cli/args.js'
import { verifySignature } from '../../src/webhooks/index.js'
import { basic, receiver, useCli, version } from './support.js'

const run = useCli()

describe('isomorphic-analytics CLI', () => {
  it('prints a readable --help and exits 0', async () => {
    const cli = run(['--help'])
    expect(await cli.exit).toBe(0)
    expect(cli.stdout()).toMatch(/^Usage: isomorphic-analytics collect \[options\]/)
    for (const flag of ['--port', '--host', '--write-key', '--webhook', '--header', '--shared-secret', '--admin-token', '--config', '--drain-timeout']) {
      expect(cli.stdout()).toContain(flag)
    }
    // Every admin endpoint the banner lists (the same list), wrapped lines read as one.
    const help = cli.stdout().replace(/\s+/g, ' ')
    for (const endpoint of ADMIN_ENDPOINTS) expect(help).toContain(endpoint)
  })

  it('prints its version', async () => {
    const cli = run(['--version'])
    expect(await cli.exit).toBe(0)
    expect(cli.stdout().trim()).toBe(version)
  })

  const dir = mkdtempSync(join(tmpdir(), 'ia-cli-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const badJson = join(dir, 'bad.json')
  writeFileSync(badJson, '{ "sources": [')

  it.each<[string, string[], RegExp]>([
    ['no command', [], /Missing command/],
    ['an unknown command', ['serve'], /Unknown command "serve"/],
    ['an unknown flag', ['collect', '--write-key', 'K', '--prot', '1'], /Unknown option --prot \(did you mean --port\?\)/],
    ['a port that is not a number', ['collect', '--write-key', 'K', '--port', 'abc'], /--port expects an integer from 0 to 65535, got "abc"/],
    ['a port out of range', ['collect', '--write-key', 'K', '--port', '70000'], /--port expects an integer/],
    ['no source', ['collect', '--port', '0'], /No source/],
    ['--webhook without --write-key', ['collect', '--webhook', 'http://127.0.0.1:1/'], /--webhook needs --write-key/],
    ['a malformed --header, its credential not echoed', ['collect', '--write-key', 'K', '--webhook', 'http://127.0.0.1:1/', '--header', 'Authorization Bearer s3cret'], /--header expects 'Name: value', and one has no colon \(its text is not shown: headers carry credentials\)\.\n(?![\s\S]*s3cret)/],
    ['--shared-secret without --webhook', ['collect', '--write-key', 'K', '--shared-secret', 's'], /give at least one --webhook/],
    ['a webhook URL that is not http(s)', ['collect', '--write-key', 'K', '--webhook', 'ftp://x/'], /Expected `--webhook` to use http or https/],
    ['a missing --config file', ['collect', '--config', join(dir, 'missing.json')], /cannot read/],
    ['a --config file that is not JSON', ['collect', '--config', badJson], /not valid JSON/],
  ])('refuses %s with exit code 2 and a message', async (_, args, message) => {
    const cli = run(args)
    expect(await cli.exit).toBe(2)
    expect(cli.stderr()).toMatch(message)
    expect(cli.stderr()).toContain('--help')
  })

  it('collects, forwards signed payloads, reports progress, and stops cleanly on SIGTERM', async () => {
    const hook = await receiver()
    try {
      const cli = run([
        'collect', '--port', '0', '--write-key', 'KEY', '--webhook', hook.url, '--header', 'X-Team: growth',
        '--shared-secret', 's3cret', '--admin-token', 'T0KEN-0123456789abc', '--progress-interval', '100',
      ])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      await cli.waitFor(/Press Ctrl\+C to stop/)
      expect(cli.stdout()).toContain(`source "default" (write key hidden) → ${hook.url} (signed)`)
      const batch = {
        batch: [
          { type: 'track', event: 'Signed Up', userId: 'u1', messageId: 'm1' },
          { type: 'identify', userId: 'u1', traits: { plan: 'pro' }, messageId: 'm2' },
        ],
      }
      const response = await fetch(`${url}/v1/batch`, {
        method: 'POST',
        headers: { authorization: basic('KEY'), 'content-type': 'application/json' },
        body: JSON.stringify(batch),
      })
      expect(response.status).toBe(200)
      const deletion = await fetch(`${url}/v1/deletions`, {
        method: 'POST',
        headers: { authorization: 'Bearer T0KEN-0123456789abc', 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'u1' }),
      })
      expect(deletion.status).toBe(200)
      await hook.until(3)
      for (const request of hook.received) {
        expect(request.headers['x-team']).toBe('growth')
        expect(await verifySignature(request.body, String(request.headers['x-signature']), 's3cret')).toBe(true)
      }
      expect(hook.received.map((r) => JSON.parse(r.body).type).sort()).toEqual(['delete', 'identify', 'track'])
      await cli.waitFor(/received 2 · forwarded 3 · retrying 0 · failed 0/)
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      expect(cli.stdout()).toContain('SIGTERM: stopping. 0 deliveries pending')
      expect(cli.stdout()).toContain('All deliveries settled.')
    } finally {
      await hook.close()
    }
  })

  it('exits 1 with a message when the port is taken', async () => {
    const hook = await receiver()
    try {
      const port = new URL(hook.url).port
      const cli = run(['collect', '--port', port, '--write-key', 'KEY'])
      expect(await cli.exit).toBe(1)
      expect(cli.stderr()).toMatch(/Cannot listen on 127\.0\.0\.1:\d+: .*EADDRINUSE/)
    } finally {
      await hook.close()
    }
  })
})
