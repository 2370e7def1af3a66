/**
 * What the client benchmarks share (bench/client.mjs, bench/client-e2e.mjs, bench/peers.mjs,
 * bench/transport.mjs, bench/faults.mjs): the build under test, the benchmark event, a median, the
 * progress log on stderr, and running a part of a bench in a fresh child process. Not a bench
 * module itself: bench/run.mjs runs only the modules that bench/results.mjs lists.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** The client entry under test. BENCH_DIST overrides the build (e.g. a frozen copy for profiling). */
export const DIST = process.env.BENCH_DIST ?? path.join(ROOT, 'dist', 'index.js')

// ---------------------------------------------------------------------------------------------
// The event: ~12 properties, a 600–680-byte message once stamped and serialised.

const PLANS = ['free', 'starter', 'pro', 'enterprise']
/** A track() input. `i` varies the ids and values so the inputs are not one constant object. */
export function makeEvent(i) {
  return {
    userId: `user_${String(i % 100_000).padStart(8, '0')}`,
    event: 'Order Completed',
    properties: {
      orderId: `ord_${String(i).padStart(10, '0')}_${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}`,
      checkoutId: `chk_${(i * 40503 >>> 0).toString(36).padStart(8, '0')}`,
      total: (12999 + (i % 100)) / 100,
      revenue: (11735 + (i % 50)) / 100,
      shipping: 7.5,
      tax: 10.4,
      discount: 5,
      coupon: 'WINTER26',
      currency: 'EUR',
      affiliation: 'Online Store',
      plan: PLANS[i % PLANS.length],
      products: [
        { productId: 'sku_4f2a9c1e', name: 'Merino sweater, navy, M', price: 89.99, quantity: 1 },
        { productId: 'sku_7b3d0e55', name: 'Organic cotton t-shirt', price: 19.99, quantity: 2 },
      ],
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Figures and progress

export function median(values) {
  const s = [...values].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/** Progress on stderr: stdout is kept for the table or the JSON result. */
export const log = (...a) => process.stderr.write(`[bench] ${a.join(' ')}\n`)

// ---------------------------------------------------------------------------------------------
// Child-process plumbing

/** Runs `node <file> ...args` and resolves with the JSON its stdout ends with. */
export function runJsonChild(file, args, { nodeArgs = [], timeoutMs = 300_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, file, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: ROOT })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${path.basename(file)} ${args.join(' ')} took over ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`${path.basename(file)} ${args.slice(0, 2).join(' ')} exited ${code ?? signal}`))
      try {
        resolve(JSON.parse(out.trim().split('\n').at(-1)))
      } catch (error) {
        reject(new Error(`${path.basename(file)}: no JSON result on stdout: ${out.slice(-500)}`))
      }
    })
  })
}
