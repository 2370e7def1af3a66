/**
 * The CLI as a real child process: built with tsup (the same tool and entry as dist/cli.js, into
 * a private directory so a concurrent `npm run build` cannot pull it away), started, used over
 * loopback, stopped with a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { build } from 'tsup'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { consoleAssetsEsbuild } from '../../scripts/console-assets.mjs'
import { parseCommand } from '../../src/cli/args.js'
import { verifySignature } from '../../src/webhooks/index.js'

const ROOT = resolve(__dirname, '../..')
const OUT = join(ROOT, 'node_modules/.cache/isomorphic-analytics-cli-test')
const CLI = join(OUT, 'cli.js')
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }

beforeAll(async () => {
  await build({
    entry: { cli: join(ROOT, 'src/cli/index.ts') },
    outDir: OUT,
    format: ['esm'],
    define: { __VERSION__: JSON.stringify(version) },
    target: 'es2022',
    splitting: false,
    config: false,
    esbuildPlugins: [consoleAssetsEsbuild],
    silent: true,
    clean: true,
  })
}, 60_000)

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
  /** Resolves with the first stdout match of `pattern`. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>
}

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, DEBUG: '', ...env }, stdio: 'pipe' })
  children.push(child)
  let out = ''
  let err = ''
  const watchers: Array<() => void> = []
  child.stdout!.on('data', (chunk) => ((out += chunk), watchers.forEach((w) => w())))
  child.stderr!.on('data', (chunk) => (err += chunk))
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: (pattern) =>
      new Promise((resolveMatch, reject) => {
        const check = () => {
          const match = out.match(pattern)
          if (match) resolveMatch(match)
        }
        watchers.push(check)
        check()
        void exit.then(() => reject(new Error(`exited before ${pattern}: ${out}\n${err}`)))
      }),
  }
}

interface Received {
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** A loopback webhook receiver answering `status` (a number or a function of the request count). */
async function receiver(status: number | ((n: number) => number) = 200) {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body })
      waiters.forEach((w) => w())
      res.statusCode = typeof status === 'number' ? status : status(received.length)
      res.end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    until: (count: number) =>
      new Promise<void>((done) => {
        const check = () => received.length >= count && done()
        waiters.push(check)
        check()
      }),
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`

describe('isomorphic-analytics CLI', () => {
  it('prints a readable --help and exits 0', async () => {
    const cli = run(['--help'])
    expect(await cli.exit).toBe(0)
    expect(cli.stdout()).toMatch(/^Usage: isomorphic-analytics collect \[options\]/)
    for (const flag of ['--port', '--host', '--write-key', '--webhook', '--header', '--shared-secret', '--admin-token', '--config', '--drain-timeout']) {
      expect(cli.stdout()).toContain(flag)
    }
  })

  it('prints its version', async () => {
    const cli = run(['--version'])
    expect(await cli.exit).toBe(0)
    expect(cli.stdout().trim()).toBe(version)
  })

  const dir = mkdtempSync(join(tmpdir(), 'ia-cli-'))
  const badJson = join(dir, 'bad.json')
  writeFileSync(badJson, '{ "sources": [')

  it.each<[string, string[], RegExp]>([
    ['no command', [], /Missing command/],
    ['an unknown command', ['serve'], /Unknown command "serve"/],
    ['an unknown flag', ['collect', '--write-key', 'K', '--prot', '1'], /Unknown option '--prot'/],
    ['a port that is not a number', ['collect', '--write-key', 'K', '--port', 'abc'], /--port expects an integer from 0 to 65535, got "abc"/],
    ['a port out of range', ['collect', '--write-key', 'K', '--port', '70000'], /--port expects an integer/],
    ['no source', ['collect', '--port', '0'], /No source/],
    ['--webhook without --write-key', ['collect', '--webhook', 'http://127.0.0.1:1/'], /--webhook needs --write-key/],
    ['a malformed --header', ['collect', '--write-key', 'K', '--webhook', 'http://127.0.0.1:1/', '--header', 'nocolon'], /--header expects 'Name: value'/],
    ['--shared-secret without --webhook', ['collect', '--write-key', 'K', '--shared-secret', 's'], /give at least one --webhook/],
    ['a webhook URL that is not http(s)', ['collect', '--write-key', 'K', '--webhook', 'ftp://x/'], /sources\[0\]\.webhooks\.urls\[0\]\.url/],
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
        '--shared-secret', 's3cret', '--admin-token', 'T0KEN', '--progress-interval', '100',
      ])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      await cli.waitFor(/Press Ctrl\+C to stop/)
      expect(cli.stdout()).toContain(`source "default" (write key …) → ${hook.url} (signed)`)
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
        headers: { authorization: 'Bearer T0KEN', 'content-type': 'application/json' },
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

  it('on SIGINT, drains within the bound and reports what is still pending', async () => {
    const hook = await receiver(503)
    try {
      const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--webhook', hook.url, '--drain-timeout', '300'])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      const response = await fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic('KEY'), 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'Stuck', userId: 'u1' }),
      })
      expect(response.status).toBe(200)
      await hook.until(1)
      cli.child.kill('SIGINT')
      expect(await cli.exit).toBe(0)
      expect(cli.stdout()).toContain('SIGINT: stopping. 1 delivery pending; waiting up to 300 ms.')
      expect(cli.stdout()).toContain('1 delivery not delivered (still pending after 300 ms; counted in failed).')
      expect(cli.stdout()).toMatch(/failed 1 · pending 0/)
    } finally {
      await hook.close()
    }
  })

  it('on SIGTERM with a slow receiver: exits within the drain timeout + 1 s, and the number it reports not delivered is the stats\' failed', async () => {
    // Each webhook request is answered 200 after 400 ms: a few rounds finish inside the drain.
    const server = createServer((req, res) => {
      req.resume()
      req.on('end', () => setTimeout(() => res.writeHead(200).end(), 400))
    })
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    try {
      const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
      const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--webhook', hook, '--drain-timeout', '1000'])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      for (let i = 0; i < 600; i += 100) {
        const batch = Array.from({ length: 100 }, (_, j) => ({ type: 'track', event: 'E', userId: `u${i + j}` }))
        const response = await fetch(`${url}/v1/batch`, { method: 'POST', headers: { authorization: basic('KEY') }, body: JSON.stringify({ batch }) })
        expect(response.status).toBe(200)
      }
      const signalledAt = Date.now()
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThanOrEqual(1000 + 1000)
      const notDelivered = Number(cli.stdout().match(/(\d+) deliver(?:y|ies) not delivered \(still pending after 1000 ms; counted in failed\)/)?.[1])
      const final = cli.stdout().match(/forwarded (\d+) · retrying \d+ · failed (\d+) · pending (\d+)/)
      expect(final).not.toBeNull()
      const [forwarded, failed, pending] = final!.slice(1).map(Number)
      expect(notDelivered).toBeGreaterThan(0)
      expect(failed).toBe(notDelivered)
      expect(forwarded + failed).toBe(600)
      expect(pending).toBe(0)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
    }
  })

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
      expect(cli.stderr()).toContain('analytics:cli admin token …qrst')
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
