#!/usr/bin/env node
/**
 * A loopback HTTP sink for the benchmarks: `POST /v1/batch` (and PostHog's `/batch/`) parses the
 * body (gunzipping it when it is gzip) and counts messages and unique messageIds (PostHog: `uuid`); `GET /stats` answers the counters; `GET /ids` answers every unique
 * messageId accepted, one per line. Listens on 127.0.0.1, port 0, and prints `{"port":N}` on
 * stdout. Exits when its stdin closes (so it never outlives the bench that spawned it) or on
 * SIGTERM/SIGINT.
 *
 * Fault modes (argv `--name value` or env `SINK_NAME`), decided per request by one draw of a
 * seeded PRNG (mulberry32), so a run is repeatable:
 *   --reset-rate  fraction of requests whose socket is destroyed after the body is read
 *                 (`req.socket.destroy()`); their messages are NOT counted (server died first).
 *   --hang-rate   fraction of requests held for --hang-ms before a 200; their messages ARE
 *                 counted on receipt (the server stored them, the answer is late): a client that
 *                 times out and retries them creates duplicates, as with a real slow server.
 *   --hang-ms     default 15000.
 *   --error-rate  fraction of requests answered 500; their messages are NOT counted.
 *   --seed        PRNG seed, default 1.
 * The fractions partition one draw: reset, then hang, then 500, else 200.
 */
import { spawn } from 'node:child_process'
import http from 'node:http'
import { gunzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { prng as mulberry32 } from './prng.mjs'

const SELF = fileURLToPath(import.meta.url)

function readConfig(argv, env) {
  const arg = (name) => {
    const i = argv.indexOf(`--${name}`)
    if (i >= 0 && i + 1 < argv.length) return argv[i + 1]
    return env[`SINK_${name.toUpperCase().replaceAll('-', '_')}`]
  }
  const num = (name, dflt) => {
    const v = arg(name)
    if (v === undefined) return dflt
    const n = Number(v)
    if (!Number.isFinite(n) || n < 0) throw new Error(`sink: bad --${name} ${v}`)
    return n
  }
  const config = {
    resetRate: num('reset-rate', 0),
    hangRate: num('hang-rate', 0),
    hangMs: num('hang-ms', 15000),
    errorRate: num('error-rate', 0),
    seed: num('seed', 1),
  }
  if (config.resetRate + config.hangRate + config.errorRate > 1) throw new Error('sink: fault rates sum above 1')
  return config
}

export function startSinkServer(config) {
  const random = mulberry32(config.seed)
  const ids = new Set()
  const stats = {
    requests: 0,
    /** Messages in every parsed batch body, whatever the answer. */
    messages: 0,
    /** Messages in batches the sink kept (answered 200, or hung then 200). */
    accepted: 0,
    unique: 0,
    duplicates: 0,
    badBodies: 0,
    status: { 200: 0, 500: 0, reset: 0, hang: 0, 404: 0, 400: 0 },
    config,
  }
  const hanging = new Set()

  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ...stats, unique: ids.size, hangingNow: hanging.size }))
      return
    }
    if (req.method === 'GET' && req.url === '/ids') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end([...ids].join('\n'))
      return
    }
    if (req.method !== 'POST' || !(req.url.startsWith('/v1/batch') || req.url.startsWith('/batch'))) {
      stats.status[404]++
      res.writeHead(404).end()
      req.resume()
      return
    }
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('error', () => {})
    req.on('end', () => {
      stats.requests++
      let batch
      try {
        const raw = Buffer.concat(chunks)
        const bytes = raw[0] === 0x1f && raw[1] === 0x8b ? gunzipSync(raw) : raw
        batch = JSON.parse(bytes.toString('utf8')).batch
        if (!Array.isArray(batch)) throw new Error('no batch')
      } catch {
        stats.badBodies++
        stats.status[400]++
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"success":false}')
        return
      }
      stats.messages += batch.length
      const r = random()
      if (r < config.resetRate) {
        stats.status.reset++
        req.socket.destroy()
        return
      }
      if (r < config.resetRate + config.hangRate) {
        stats.status.hang++
        accept(batch)
        const timer = setTimeout(() => {
          hanging.delete(timer)
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
        }, config.hangMs)
        hanging.add(timer)
        res.on('close', () => {
          clearTimeout(timer)
          hanging.delete(timer)
        })
        return
      }
      if (r < config.resetRate + config.hangRate + config.errorRate) {
        stats.status[500]++
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"success":false}')
        return
      }
      stats.status[200]++
      accept(batch)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
    })
  })

  function accept(batch) {
    stats.accepted += batch.length
    for (const m of batch) {
      const id = m?.messageId ?? m?.uuid
      if (ids.has(id)) stats.duplicates++
      else ids.add(id)
    }
  }

  server.keepAliveTimeout = 30_000
  server.headersTimeout = 60_000
  server.requestTimeout = 0
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, stats }))
  })
}

/**
 * Spawns the sink as its own process and resolves with `{ port, url, stats(), ids(), stop() }`.
 * `options` keys: resetRate, hangRate, hangMs, errorRate, seed.
 */
export async function spawnSink(options = {}) {
  const flags = { resetRate: 'reset-rate', hangRate: 'hang-rate', hangMs: 'hang-ms', errorRate: 'error-rate', seed: 'seed' }
  const args = [SELF]
  for (const [key, flag] of Object.entries(flags)) if (options[key] !== undefined) args.push(`--${flag}`, String(options[key]))
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'inherit'] })
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.once('exit', (code) => reject(new Error(`sink exited early (${code})`)))
    child.stdout.on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl >= 0) resolve(JSON.parse(out.slice(0, nl)).port)
    })
  })
  child.removeAllListeners('exit')
  const url = `http://127.0.0.1:${port}`
  // The sink's own requests go through node:http, not fetch, so they never share the client's pool.
  const get = (path) =>
    new Promise((resolve, reject) => {
      http
        .get(`${url}${path}`, { agent: false }, (res) => {
          const chunks = []
          res.on('data', (c) => chunks.push(c))
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
        })
        .on('error', reject)
    })
  return {
    port,
    url,
    pid: child.pid,
    stats: async () => JSON.parse(await get('/stats')),
    ids: async () => new Set((await get('/ids')).split('\n').filter(Boolean)),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}

if (process.argv[1] === SELF) {
  const config = readConfig(process.argv.slice(2), process.env)
  const { server, port } = await startSinkServer(config)
  process.stdout.write(`${JSON.stringify({ port })}\n`)
  const stop = () => {
    server.closeAllConnections?.()
    server.close()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.stdin.on('end', stop)
  process.stdin.on('error', stop)
  process.stdin.resume()
}
