/**
 * workerd (Cloudflare Workers' runtime, from npm): the package's ESM build, bundled by esbuild the
 * way wrangler does (browser platform, `workerd`/`worker` conditions, no `nodejs_compat`), runs in
 * a fetch handler that creates a Client, tracks one event and passes `client.flush()` to
 * `ctx.waitUntil`. One request to workerd on loopback → the sink receives the event. The collector
 * runs there too; a tracking plan (ajv compiles schemas to code, which Workers forbid) cannot.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSink, UUID_V4, type Sink } from './support/sink.js'
import { requireBinary, requireBuild, ROOT, scratchDir, writeFiles } from './support/runtimes.js'

const WORKER_SOURCE = `import { Client } from 'isomorphic-analytics'
import { createCollector } from 'isomorphic-analytics/collector'
const PLAN = { events: { Signup: { type: 'object', properties: { plan: { type: 'string' } } } } }
/** The collector in a Worker: without a tracking plan it ingests; with one it says why it cannot. */
function collectorRoute(request) {
  try {
    const plan = new URL(request.url).searchParams.get('plan') === '1'
    const collector = createCollector({ sources: [{ writeKey: 'edge-key', name: 'edge', ...(plan && { trackingPlan: PLAN }) }] })
    const batch = JSON.stringify({ writeKey: 'edge-key', batch: [{ type: 'track', userId: 'u', event: 'Signup', properties: {} }] })
    return collector.fetch(new Request('http://collector/v1/batch', { method: 'POST', body: batch }))
  } catch (error) {
    return Response.json({ name: error.name, option: error.option, message: error.message }, { status: 500 })
  }
}
export default {
  async fetch(request, env, ctx) {
    if (new URL(request.url).pathname === '/collector') return collectorRoute(request)
    const tag = new URL(request.url).searchParams.get('tag')
    const client = new Client('edge-key', { endpoint: env.SINK, flushAt: 100 })
    const message = client.track({ userId: 'edge-user', event: tag, properties: { runtime: 'workerd' } })
    const flushed = client.flush().then((result) => console.log('flushed ' + JSON.stringify(result)))
    ctx.waitUntil(flushed)
    return Response.json({ messageId: message.messageId, hasProcess: typeof process !== 'undefined' })
  },
}
`

const config = (sink: string) => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .mainWorker),
    # The default "internet" service refuses private addresses; the sink is on 127.0.0.1.
    (name = "loopback", network = (allow = ["local", "private"])),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:0", http = (), service = "main") ],
);
const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2025-06-01",
  bindings = [ (name = "SINK", text = ${JSON.stringify(sink)}) ],
  globalOutbound = "loopback",
);
`

let sink: Sink
let scratch: ReturnType<typeof scratchDir>
let workerd: ChildProcess | undefined
let workerdUrl: string
let output = ''

/** Starts workerd on an ephemeral port; its control fd reports the port once it listens. */
function startWorkerd(binary: string, dir: string): Promise<string> {
  const child = spawn(binary, ['serve', 'config.capnp', '--socket-addr', 'http=127.0.0.1:0', '--control-fd', '3', '--verbose'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  workerd = child
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`workerd did not start listening in 30 s:\n${output}`)), 30_000)
    let control = ''
    ;(child.stdio[3] as Readable).on('data', (c: Buffer) => {
      control += c.toString()
      for (const line of control.split('\n')) {
        if (!line.trim()) continue
        const event = JSON.parse(line) as { event: string; socket?: string; port?: number }
        if (event.event === 'listen' && event.socket === 'http') {
          clearTimeout(timer)
          resolve(`http://127.0.0.1:${event.port}`)
        }
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`workerd exited with ${code} before listening:\n${output}`))
    })
  })
}

beforeAll(async () => {
  requireBuild('index.js')
  const binary = requireBinary('workerd')
  sink = await startSink()
  scratch = scratchDir('workerd')
  // Resolved through the package's own `exports` (self-reference from the repo root), with the
  // conditions wrangler uses for Workers.
  const bundle = await build({
    stdin: { contents: WORKER_SOURCE, resolveDir: ROOT, sourcefile: 'worker-entry.js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  })
  writeFiles(scratch.dir, { 'worker.js': bundle.outputFiles[0].text, 'config.capnp': config(sink.url) })
  workerdUrl = await startWorkerd(binary, scratch.dir)
}, 60_000)

afterAll(async () => {
  if (workerd && workerd.exitCode === null) {
    const exited = new Promise((resolve) => workerd!.once('exit', resolve))
    workerd.kill('SIGTERM')
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
    if (workerd.exitCode === null) workerd.kill('SIGKILL')
  }
  await sink?.close()
  scratch?.remove()
})

describe('workerd', () => {
  it('tracks in a fetch handler and delivers through ctx.waitUntil(client.flush())', async () => {
    const response = await fetch(`${workerdUrl}/?tag=workerd-event`)
    expect(response.status, output).toBe(200)
    const { messageId, hasProcess } = (await response.json()) as { messageId: string; hasProcess: boolean }
    expect(messageId).toMatch(UUID_V4)
    expect(hasProcess).toBe(false) // no nodejs_compat: nothing Node-shaped to lean on

    const [received] = await sink.waitForMessages(1, 20_000, (m) => m.event === 'workerd-event')
    expect(received.messageId).toBe(messageId)
    expect(received.properties).toEqual({ runtime: 'workerd' })
    const request = sink.batches().find((r) => r.body?.batch.some((m) => m.messageId === messageId))!
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers.authorization).toBe(`Basic ${btoa('edge-key:')}`)
    expect(request.body?.context?.library?.name).toBe('isomorphic-analytics')
    // waitUntil kept the invocation alive until the batch was delivered.
    const deadline = Date.now() + 10_000
    while (!output.includes('flushed {"delivered":1,"failed":0}') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(output).toContain('flushed {"delivered":1,"failed":0}')
  }, 60_000)

  it('runs the collector; a source with a trackingPlan is a ConfigError saying Workers forbid compiling it', async () => {
    const plain = await fetch(`${workerdUrl}/collector`)
    expect(plain.status, output).toBe(200)
    const planned = await fetch(`${workerdUrl}/collector?plan=1`)
    expect(planned.status).toBe(500)
    const error = (await planned.json()) as { name: string; option: string; message: string }
    expect(error.name).toBe('ConfigError')
    expect(error.option).toBe('sources[0].trackingPlan.events["Signup"]')
    expect(error.message).toMatch(/cannot be compiled here: this runtime forbids code generation .*tracking plans need Node, Bun or Deno/)
  }, 30_000)

  it('serves the worker bundle with no node: import in it', async () => {
    const { readFileSync } = await import('node:fs')
    const code = readFileSync(join(scratch.dir, 'worker.js'), 'utf8')
    expect(code).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/)
  })
})
