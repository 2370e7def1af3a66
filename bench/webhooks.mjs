// Webhooks benchmarks (run `npm run build` first; imports the built ../dist/webhooks.js):
//   (a) sign + JSON.stringify of a ~1 KB payload, µs per operation (median of 7 runs), target < 20
//       (CPU time; the wall time is shown too)
//   (b) deliveries per second from one WebhookDestination to a loopback sink in another process
//       (median of 3 runs), target ≥ 2,000
// `node bench/webhooks.mjs` prints a table; `run()` returns the rows for bench/run.mjs.
// Traffic goes to 127.0.0.1 only.
import { loadavg } from 'node:os'
import { pathToFileURL } from 'node:url'
import { startSink } from './sink-server.mjs'

// bench/run.mjs freezes the build under test and names its index.js in BENCH_DIST; standalone,
// the live ../dist/webhooks.js is used.
const { WebhookDestination, sign, toWebhookPayload } = await import(
  process.env.BENCH_DIST ? new URL('webhooks.js', pathToFileURL(process.env.BENCH_DIST)).href : '../dist/webhooks.js'
)

const SECRET = 'bench-shared-secret'
// BENCH_STANDARD_SECRETS=1: the destinations also sign the Standard Webhooks way (signing twice),
// for an interleaved A/B against the default (X-Signature only) by hand, with `--no-save`.
const STANDARD = process.env.BENCH_STANDARD_SECRETS === '1' ? { standardSecrets: [`whsec_${Buffer.from('bench standard webhooks secret!!').toString('base64')}`] } : {}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

/** A realistic track payload of about 1 KB once serialised. */
export function samplePayload() {
  const properties = { orderId: 'ord_4f9c2a7e', currency: 'EUR', total: 129.95, coupon: 'WINTER-25', products: [] }
  for (let i = 0; i < 6; i++) {
    properties.products.push({ sku: `SKU-${1000 + i}`, name: `Product ${i} — Größe M`, price: 32.49, quantity: i + 1 })
  }
  return toWebhookPayload({
    type: 'track',
    event: 'Order Completed',
    userId: 'user_8d2b6c0f4e',
    anonymousId: '6f1c3b5e-2a4d-4f8e-9b7a-1c2d3e4f5a6b',
    messageId: '0b7f5c1e-9d3a-4e2b-8f6c-5a4b3c2d1e0f',
    timestamp: '2026-11-22T10:00:00.000Z',
    properties,
    context: {
      ip: '203.0.113.9',
      locale: 'de-DE',
      library: { name: 'isomorphic-analytics', version: '0.1.0' },
      page: { path: '/checkout/complete', url: 'https://shop.example.com/checkout/complete', title: 'Danke!' },
    },
  })
}

/**
 * Times `ops` sequential runs of `fn`, 7 times; returns the median wall time and the median CPU
 * time (user + system) per op, in µs. On a busy machine the wall time also counts the time other
 * processes held the CPU; the CPU time is what the operation itself costs.
 */
async function perOp(fn, ops) {
  for (let i = 0; i < ops; i++) await fn() // warm up
  const wall = []
  const cpu = []
  for (let r = 0; r < 7; r++) {
    const cpu0 = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < ops; i++) await fn()
    wall.push(((performance.now() - start) * 1000) / ops)
    const used = process.cpuUsage(cpu0)
    cpu.push((used.user + used.system) / ops)
  }
  return { wall: round(median(wall), 2), cpu: round(median(cpu), 2) }
}

async function signAndSerialise() {
  const payload = samplePayload()
  const bytes = Buffer.byteLength(JSON.stringify(payload))
  const { wall, cpu } = await perOp(() => sign(JSON.stringify(payload), SECRET), 20_000)
  return [
    { name: `sign + JSON.stringify, ${bytes} B payload (CPU time)`, value: cpu, unit: 'µs/op', target: '< 20' },
    { name: `sign + JSON.stringify, ${bytes} B payload (wall time)`, value: wall, unit: 'µs/op', target: '—' },
  ]
}

async function deliveries(destination, payload, total, concurrency) {
  let next = 0
  let failed = 0
  const worker = async () => {
    while (next < total) {
      next++
      const result = await destination.deliver(payload)
      if (!result.delivered) failed++
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, worker))
  const seconds = (performance.now() - start) / 1000
  if (failed > 0) throw new Error(`${failed} of ${total} deliveries failed`)
  return total / seconds
}

/** The same traffic with bare `fetch` (no signing, retry or bookkeeping): the runtime's ceiling. */
const bareFetch = (url, body) => ({
  async deliver() {
    const response = await fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json' } })
    await response.arrayBuffer()
    return { delivered: response.ok }
  },
})

/** What the destination itself costs per delivery (serialise, sign, bookkeeping), with a stub fetch. */
async function ownOverhead() {
  const response = { status: 200, statusText: 'OK', headers: new Headers(), arrayBuffer: async () => new ArrayBuffer(0) }
  const destination = new WebhookDestination({ urls: [{ url: 'http://127.0.0.1:9/' }], sharedSecret: SECRET, ...STANDARD, fetch: async () => response })
  const payload = samplePayload()
  const { cpu } = await perOp(() => destination.deliver(payload), 20_000)
  return { name: 'WebhookDestination own cost per delivery, stub fetch (CPU time)', value: cpu, unit: 'µs/op', target: '—' }
}

async function deliveryThroughput() {
  const sink = await startSink('/hook')
  try {
    const destination = new WebhookDestination({ urls: [{ url: sink.url }], sharedSecret: SECRET, ...STANDARD })
    const payload = samplePayload()
    const baseline = bareFetch(sink.url, JSON.stringify(payload))
    await deliveries(destination, payload, 2_000, IN_FLIGHT) // warm up: connections, JIT
    await deliveries(baseline, payload, 2_000, IN_FLIGHT)
    const runs = []
    const bare = []
    // Interleaved, so both see the same machine load.
    for (let r = 0; r < 3; r++) {
      runs.push(await deliveries(destination, payload, 10_000, IN_FLIGHT))
      bare.push(await deliveries(baseline, payload, 10_000, IN_FLIGHT))
    }
    await destination.close()
    const load = loadavg()[0].toFixed(1)
    return [
      { name: `WebhookDestination deliveries to a loopback sink (${IN_FLIGHT} in flight, load ${load})`, value: Math.round(median(runs)), unit: 'deliveries/s', target: '≥ 2000' },
      { name: 'baseline: bare fetch POSTs of the same body', value: Math.round(median(bare)), unit: 'requests/s', target: '—' },
    ]
  } finally {
    sink.stop()
  }
}

const IN_FLIGHT = 32

const round = (value, digits) => Math.round(value * 10 ** digits) / 10 ** digits

export async function run() {
  return [...(await signAndSerialise()), await ownOverhead(), ...(await deliveryThroughput())]
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await run()
  console.table(rows.map(({ name, value, unit, target }) => ({ benchmark: name, value, unit, target })))
}
