/**
 * `collect --config FILE --queue URL` (in this process, on a real redis-server): the console's
 * settings are kept in the queue server, which takes precedence; the file is not written.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { parseCommand } from '../../../src/cli/args.js'
import { collect } from '../../../src/cli/collect.js'
import { startRedis, type QueueServerProcess } from '../../helpers/queue-servers.js'
import { until } from './support.js'

let redis: QueueServerProcess
let dir: string
beforeAll(async () => {
  redis = await startRedis()
  dir = mkdtempSync(join(tmpdir(), 'ia-cli-settings-'))
}, 30_000)
afterAll(async () => {
  await redis?.stop()
  rmSync(dir, { recursive: true, force: true })
})

it('with --queue, a settings change is kept in the queue server and the --config file is not written', async () => {
  const file = join(dir, 'collector.json')
  const text = `${JSON.stringify({ sources: [{ writeKey: 'KEY', name: 'web', webhooks: { urls: [{ url: 'http://127.0.0.1:9/old' }] } }], adminToken: 'admin-token-for-tests', allowPrivateWebhookUrls: true }, null, 2)}\n`
  writeFileSync(file, text)
  const command = parseCommand(['collect', '--port', '0', '--config', file, '--queue', redis.url])
  if (command.kind !== 'collect') throw new Error('expected collect')
  let out = ''
  let stop!: (signal: string) => void
  const exited = collect(command.args, {
    out: (t) => void (out += t),
    err: () => {},
    isTTY: false,
    debug: undefined,
    stopSignal: () => new Promise((resolve) => (stop = resolve)),
  })
  await until(() => out.includes('Press Ctrl+C'), 'the collector to listen')
  expect(out).toContain(`console settings: kept in the queue server (${file} is not written)`)
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]
  const headers = { authorization: 'Bearer admin-token-for-tests', 'content-type': 'application/json' }
  const put = await fetch(`${url}/v1/admin/sources/web/webhooks`, { method: 'PUT', headers, body: JSON.stringify({ urls: [{ url: 'http://127.0.0.1:9/new' }] }) })
  expect(await put.json()).toMatchObject({ success: true, persisted: true })
  const sources = (await (await fetch(`${url}/v1/admin/sources`, { headers })).json()) as { settings: unknown }
  expect(sources.settings).toEqual({ store: 'queue', durable: true })
  stop('SIGTERM')
  expect(await exited).toBe(0)
  expect(readFileSync(file, 'utf8')).toBe(text)
}, 30_000)
