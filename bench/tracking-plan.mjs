#!/usr/bin/env node
/**
 * Issue 12 targets, the cost of tracking plans:
 *   (a) client: track() with a zod schema of five properties, minus track() without one (the same
 *       client options and event), per call: target ≤ 2 µs;
 *   (b) collector: ingest throughput of the fetch handler (batches of 100 track events, forwarding
 *       off, in process) with a JSON Schema tracking plan vs without: target within 20 %.
 * Runs are interleaved (without, with, without, …) so load on a shared machine hits both alike;
 * the client cost is the median of paired differences of many short runs.
 *
 *   node bench/tracking-plan.mjs          prints a table
 * Needs the build (`npm run build`); bench/run.mjs names a frozen copy in BENCH_DIST.
 */
import { fileURLToPath, pathToFileURL } from 'node:url'
import path from 'node:path'
import { z } from 'zod'

const SELF = fileURLToPath(import.meta.url)
const DIST = process.env.BENCH_DIST ?? path.join(path.dirname(SELF), '..', 'dist', 'index.js')
const load = (entry) => import(new URL(entry, pathToFileURL(DIST)).href)

const median = (values) => {
  const s = [...values].sort((a, b) => a - b)
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

const RUNS = 9
/** Client pairs: short runs, many of them (see clientCost). */
const CLIENT_RUNS = 41
const WARMUP = 3

// ── (a) client ──────────────────────────────────────────────────────────────────────────────

const orderCompleted = z.object({
  orderId: z.string(),
  total: z.number(),
  currency: z.enum(['EUR', 'USD', 'GBP']),
  quantity: z.number().int(),
  coupon: z.string().optional(),
})

const trackInput = (i) => ({
  userId: `user_${i % 1000}`,
  event: 'Order Completed',
  properties: { orderId: `ord_${i}`, total: 10 + (i % 100) / 100, currency: 'EUR', quantity: 1 + (i % 3), coupon: 'WINTER' },
})

async function clientCost() {
  const { Client } = await load('index.js')
  const ok = () => Promise.resolve(new Response('{"success":true}', { status: 200 }))
  const options = { fetch: ok, flushAt: 1_000_000, maxQueueSize: 10_000_000, flushAfter: 3_600_000 }
  const plain = new Client('bench-key', options)
  const checked = new Client('bench-key', { ...options, schema: { 'Order Completed': orderCompleted } })
  let refused = 0
  checked.on('error', () => refused++)
  const POOL = 1024
  const inputs = Array.from({ length: POOL }, (_, i) => trackInput(i))
  const CALLS = 5_000
  const time = (client) => {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < CALLS; i++) client.track(inputs[i & (POOL - 1)])
    return Number(process.hrtime.bigint() - t0) / CALLS
  }
  // Short runs, alternating which client goes first, paired: the cost is the median of each
  // pair's difference, so load that shifts between pairs (a shared machine) cancels out.
  const without = []
  const withSchema = []
  const cost = []
  for (let run = 0; run < WARMUP + CLIENT_RUNS; run++) {
    const first = run % 2 === 0 ? plain : checked
    const second = first === plain ? checked : plain
    const t1 = time(first)
    await first.flush()
    const t2 = time(second)
    await second.flush()
    const [a, b] = first === plain ? [t1, t2] : [t2, t1]
    if (run >= WARMUP) {
      without.push(a)
      withSchema.push(b)
      cost.push(b - a)
    }
  }
  // The validator alone, for scale.
  const zodNs = []
  for (let run = 0; run < WARMUP + CLIENT_RUNS; run++) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < CALLS; i++) orderCompleted['~standard'].validate(inputs[i & (POOL - 1)].properties)
    if (run >= WARMUP) zodNs.push(Number(process.hrtime.bigint() - t0) / CALLS)
  }
  await Promise.all([plain.close(), checked.close()])
  if (refused > 0) throw new Error(`${refused} valid events were refused`)
  return { without: median(without), with: median(withSchema), cost: median(cost), zod: median(zodNs) }
}

// ── (b) collector ───────────────────────────────────────────────────────────────────────────

const BATCH = 100
const productViewed = {
  type: 'object',
  required: ['sku', 'price', 'currency', 'category'],
  properties: {
    sku: { type: 'string', minLength: 1 },
    price: { type: 'number', minimum: 0 },
    currency: { enum: ['EUR', 'USD', 'GBP'] },
    category: { type: 'string' },
  },
  additionalProperties: false,
}

function batchBody(n) {
  const now = new Date().toISOString()
  const batch = Array.from({ length: BATCH }, (_, i) => ({
    type: 'track',
    event: 'Product Viewed',
    userId: `user-${i % 50}`,
    messageId: `m-${n}-${i}`,
    timestamp: now,
    properties: { sku: `sku-${i}`, price: 19.99, currency: 'EUR', category: 'shoes' },
  }))
  return JSON.stringify({ batch, sentAt: now })
}

async function collectorThroughput() {
  const { createCollector } = await load('collector.js')
  const KEY = 'bench-key'
  const plain = createCollector({ sources: [{ writeKey: KEY, name: 'bench' }] })
  const planned = createCollector({
    sources: [{ writeKey: KEY, name: 'bench', trackingPlan: { events: { 'Product Viewed': productViewed }, unplanned: 'block' } }],
  })
  const bodies = Array.from({ length: 64 }, (_, n) => batchBody(n))
  const headers = { 'content-type': 'application/json', authorization: `Basic ${btoa(`${KEY}:`)}` }
  const REQUESTS = 400
  const time = async (collector) => {
    const t0 = performance.now()
    for (let i = 0; i < REQUESTS; i++) {
      const response = await collector.fetch(new Request('http://collector.test/v1/batch', { method: 'POST', headers, body: bodies[i & 63] }))
      if (response.status !== 200) throw new Error(`ingest answered ${response.status}`)
    }
    return (REQUESTS * BATCH) / ((performance.now() - t0) / 1000)
  }
  const without = []
  const withPlan = []
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const a = await time(plain)
    const b = await time(planned)
    if (run >= WARMUP) {
      without.push(a)
      withPlan.push(b)
    }
  }
  const blocked = planned.stats().blocked
  await Promise.all([plain.close(0), planned.close(0)])
  if (blocked > 0) throw new Error(`${blocked} valid events were blocked`)
  return { without: median(without), with: median(withPlan) }
}

export async function run() {
  const client = await clientCost()
  const collector = await collectorThroughput()
  return [
    { name: 'track() without schema', value: Math.round(client.without), unit: 'ns/call' },
    { name: 'track() with a zod schema of five properties', value: Math.round(client.with), unit: 'ns/call' },
    { name: 'zod ~standard.validate alone (same properties)', value: Math.round(client.zod), unit: 'ns/call' },
    { name: 'schema cost per track() (median of paired with − without)', value: Number((client.cost / 1000).toFixed(3)), unit: 'µs', target: '≤ 2' },
    { name: 'collector ingest, fetch handler in process, batches of 100, no plan', value: Math.round(collector.without), unit: 'events/s' },
    { name: 'collector ingest, same, with a tracking plan (4 properties)', value: Math.round(collector.with), unit: 'events/s' },
    { name: 'ingest throughput with a plan, relative to without', value: Number((100 * collector.with / collector.without).toFixed(1)), unit: '%', target: '≥ 80' },
  ]
}

if (process.argv[1] === SELF) console.table(await run())
