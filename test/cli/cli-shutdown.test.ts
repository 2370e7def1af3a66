/**
 * The CLI stopping with work in flight: on SIGINT or SIGTERM it drains deliveries within
 * --drain-timeout, then reports what was not delivered (counted in the stats' failed); with
 * --queue (a real redis-server), what became of the attempts in flight; and a signal that comes
 * while it is still starting.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { freePort, startRedis } from '../helpers/queue-servers.js'
import { basic, receiver, useCli } from './support.js'

const run = useCli()

describe('isomorphic-analytics CLI', () => {
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

  it('on SIGTERM with a webhook request on the wire and a 15 s webhook timeout: cancels it at the drain timeout, exits within it + 1 s', async () => {
    // The receiver takes the request and never answers.
    let received = 0
    const server = createServer((req) => {
      received++
      req.resume()
    })
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    const dir = mkdtempSync(join(tmpdir(), 'ia-cli-'))
    try {
      const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
      const config = join(dir, 'collector.json')
      writeFileSync(config, JSON.stringify({ sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: hook }], timeout: 15_000 } }] }))
      const cli = run(['collect', '--port', '0', '--config', config, '--drain-timeout', '500'])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      const response = await fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic('KEY'), 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'Hung', userId: 'u1' }),
      })
      expect(response.status).toBe(200)
      while (received === 0) await new Promise((r) => setTimeout(r, 20))
      const signalledAt = Date.now()
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThanOrEqual(500 + 1000)
      expect(cli.stdout()).toContain('1 delivery not delivered (still pending after 500 ms; counted in failed).')
      expect(cli.stdout()).toMatch(/forwarded 0 · retrying 0 · failed 1 · pending 0/)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it.each([
    { answerAfterMs: 0, receiver: 'answering at once', line: /^Attempts in flight finished; the rest stays in the queue server for the next collector\.$/m },
    { answerAfterMs: 10_000, receiver: 'answering after 10 s', line: /^(\d+) attempts? still in flight after 1000 ms (was|were) stopped; (it stays|they stay) in the queue server with the queued deliveries\.$/m },
  ])('with --queue, its last line says what became of the attempts in flight (receiver $receiver)', async ({ answerAfterMs, line }) => {
    const redis = await startRedis()
    let received = 0
    const server = createServer((req, res) => {
      received++
      req.resume()
      req.on('end', () => setTimeout(() => res.writeHead(200).end(), answerAfterMs))
    })
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    try {
      const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`
      const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--webhook', hook, '--queue', redis.url, '--drain-timeout', '1000'])
      const [, url] = await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      const response = await fetch(`${url}/v1/track`, {
        method: 'POST',
        headers: { authorization: basic('KEY'), 'content-type': 'application/json' },
        body: JSON.stringify({ event: 'Durable', userId: 'u1' }),
      })
      expect(response.status).toBe(200)
      const deadline = Date.now() + 15_000
      while (received === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      expect(received).toBe(1)
      if (answerAfterMs === 0) await new Promise((r) => setTimeout(r, 200)) // the answer is in
      const signalledAt = Date.now()
      cli.child.kill('SIGTERM')
      expect(await cli.exit).toBe(0)
      expect(Date.now() - signalledAt).toBeLessThanOrEqual(1000 + 1000)
      const said = line.exec(cli.stdout())
      expect(said, cli.stdout()).not.toBeNull()
      if (answerAfterMs > 0) expect(Number(said![1])).toBe(1)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((done) => server.close(() => done()))
      await redis.stop()
    }
  }, 30_000)

  it('with --queue naming a server never reached, its last line says nothing was taken from it', async () => {
    const port = await freePort()
    const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--webhook', 'http://127.0.0.1:9/hook', '--queue', `redis://127.0.0.1:${port}`, '--drain-timeout', '500'])
    await cli.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
    cli.child.kill('SIGTERM')
    expect(await cli.exit).toBe(0)
    expect(cli.stdout()).toMatch(/^The queue server was not reached within 500 ms; nothing was taken from it\.$/m)
  }, 30_000)

  it('on SIGTERM during start-up (a queue server not reached yet), stops cleanly: exit 0 and says nothing was accepted', async () => {
    const port = await freePort()
    const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--queue', `redis://127.0.0.1:${port}`])
    // Start-up waits (up to 10 s) for the server; its refused connections are reported on stderr meanwhile.
    const deadline = Date.now() + 10_000
    while (!/ECONNREFUSED/.test(cli.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(cli.stdout()).toBe('')
    const signalledAt = Date.now()
    cli.child.kill('SIGTERM')
    expect(await cli.exit).toBe(0)
    expect(Date.now() - signalledAt).toBeLessThanOrEqual(2_000)
    expect(cli.stdout()).toBe('SIGTERM during start-up: stopped before listening; nothing was accepted.\n')
  }, 30_000)
})
