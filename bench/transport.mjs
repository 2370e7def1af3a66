#!/usr/bin/env node
/**
 * What a request costs the sending process, by runtime and transport: the runtime's `fetch`
 * against `node:http` with a keep-alive agent (what the client uses on Node; on Bun and Deno it
 * keeps `fetch`). The same batch body (20 messages of bench/support.mjs's event, as the client's
 * default `flushAt` sends), 8 requests in flight (the client's connection bound), to a loopback
 * sink in another process (bench/sink-server.mjs). CPU time (user + system) of the sending
 * process per request, median of interleaved runs, so load on a shared machine hits both alike.
 * Node is this process; Bun and Deno (the devDependencies' binaries) run this file with
 * `--measure <url>` and print their figures.
 *
 *   node bench/transport.mjs          prints a table; `run()` returns the rows for bench/run.mjs
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import http from 'node:http'
import process from 'node:process'
import { fileURLToPath } from 'node:url'
import { makeEvent } from './support.mjs'
import { startSink } from './sink-server.mjs'

const SELF = fileURLToPath(import.meta.url)
const BATCH = 20
const IN_FLIGHT = 8
const REQUESTS = 2_000
const RUNS = 5

function body() {
  const sentAt = new Date().toISOString()
  const batch = Array.from({ length: BATCH }, (_, i) => ({ ...makeEvent(i), type: 'track', messageId: crypto.randomUUID(), timestamp: sentAt }))
  return JSON.stringify({ batch, sentAt })
}

const headers = { 'Content-Type': 'application/json', Authorization: `Basic ${btoa('bench-key:')}` }

const viaFetch = (url, text) => async () => {
  const response = await fetch(url, { method: 'POST', headers, body: text })
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`fetch: the sink answered ${response.status}`)
}

/**
 * POSTs through `node:http` to `url` with a keep-alive agent of IN_FLIGHT sockets (also the floor
 * of bench/peers.mjs): `(text, length)` resolves once the sink answered 200. `length`, the body's
 * UTF-8 bytes, is the caller's to compute before any clock starts.
 */
export function nodeHttpPoster(url) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: IN_FLIGHT })
  const post = (text, length) =>
    new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent, headers: { ...headers, 'Content-Length': String(length) } }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`node:http: the sink answered ${res.statusCode}`))))
      })
      req.on('error', reject)
      req.end(text)
    })
  return Object.assign(post, { close: () => agent.destroy() })
}

function viaNodeHttp(url, text) {
  const post = nodeHttpPoster(url)
  const length = new TextEncoder().encode(text).byteLength
  return () => post(text, length)
}

/** CPU µs of this process per request, `count` requests (`send(i)`, i from 0) with IN_FLIGHT at a time. */
export async function cpuPerRequest(send, count) {
  let next = 0
  const cpu0 = process.cpuUsage()
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await send(next++)
    }),
  )
  const used = process.cpuUsage(cpu0)
  return (used.user + used.system) / count
}

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1]

/** µs per request by transport, measured in this process against the sink at `url`. */
async function measure(url) {
  const text = body()
  const transports = { fetch: viaFetch(url, text), 'node:http': viaNodeHttp(url, text) }
  const runs = Object.fromEntries(Object.keys(transports).map((name) => [name, []]))
  for (const send of Object.values(transports)) await cpuPerRequest(send, REQUESTS / 4) // warm up: sockets, JIT
  for (let r = 0; r < RUNS; r++) for (const [name, send] of Object.entries(transports)) runs[name].push(await cpuPerRequest(send, REQUESTS))
  return { bytes: new TextEncoder().encode(text).byteLength, perRequest: Object.fromEntries(Object.entries(runs).map(([name, values]) => [name, median(values)])) }
}

const BIN = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url))
const RUNTIMES = {
  Node: (url) => measure(url),
  Bun: (url) => JSON.parse(execFileSync(`${BIN}bun`, ['run', SELF, '--measure', url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })),
  Deno: (url) => JSON.parse(execFileSync(`${BIN}deno`, ['run', '-A', SELF, '--measure', url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })),
}

export async function run() {
  for (const name of ['bun', 'deno']) if (!existsSync(`${BIN}${name}`)) throw new Error(`transport: ${BIN}${name} is missing: run \`npm ci\` (devDependency \`${name}\`)`)
  const sink = await startSink('/v1/batch')
  try {
    const rows = []
    for (const [runtime, measureIn] of Object.entries(RUNTIMES)) {
      const { bytes, perRequest } = await measureIn(sink.url)
      for (const [transport, us] of Object.entries(perRequest)) {
        rows.push({ name: `CPU per request on ${runtime}, ${transport} (${BATCH}-message body of ${bytes.toLocaleString('en-US')} B, ${IN_FLIGHT} in flight)`, value: Math.round(us), unit: 'µs', target: '' })
      }
    }
    return rows
  } finally {
    sink.stop()
  }
}

if (process.argv[2] === '--measure') {
  process.stdout.write(`${JSON.stringify(await measure(process.argv[3]))}\n`)
  process.exit(0)
} else if (process.argv[1] === SELF) console.table(await run())
