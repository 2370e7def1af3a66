// A library user's process with a durable collector, for the tests of what `close()` leaves
// running: no server, no CLI, no `process.exit`. Env: QUEUE (queue server URL), WEBHOOK, SECRET,
// DRAIN (drain timeout, ms), CONCURRENCY, COLLECTOR_MODULE (default ../../../dist/collector.js;
// a `.cjs` build is loaded with `require`, as a CommonJS user does).
// Debug lines and reported errors go to stderr. Over IPC: `{ send: body }` posts a batch and
// prints `{"status":…}`; `{ close: true }` disconnects the IPC channel, so that nothing of the
// test holds the process, calls `collector.close()` and prints `{"closed":report}` once it
// resolved. The process should then end on its own. With CLOSE_AT_ONCE set (and no IPC), `close()`
// is called right after `createCollector()`, before any connection is made; the `started` line
// then says when (`closeCalledAt`, ms since epoch).
import { createRequire } from 'node:module'

const env = process.env
const collectorModule = env.COLLECTOR_MODULE ?? '../../../dist/collector.js'
const { createCollector } = collectorModule.endsWith('.cjs') ? createRequire(import.meta.url)(collectorModule) : await import(collectorModule)
const collector = createCollector({
  sources: [
    {
      writeKey: 'KEY',
      name: 'web',
      webhooks: { urls: [{ url: env.WEBHOOK ?? 'http://127.0.0.1:9/hook' }], ...(env.SECRET && { sharedSecret: env.SECRET }) },
    },
  ],
  queue: env.QUEUE,
  drainTimeout: Number(env.DRAIN ?? 1000),
  ...(env.CONCURRENCY && { deliveryConcurrency: Number(env.CONCURRENCY) }),
  debug: true,
  onError: (error) => console.error(`onError: ${error.message}`),
})
const close = async () => {
  const report = await collector.close()
  console.log(JSON.stringify({ closed: report }))
}
// When close() was called, on the clock the test reads too: the time to start Node and import the
// collector (over a second on a loaded machine) is not close()'s.
const closeCalledAt = env.CLOSE_AT_ONCE ? Date.now() : undefined
if (env.CLOSE_AT_ONCE) void close()
process.on('message', async (message) => {
  if (message.send !== undefined) {
    const response = await collector.fetch(new Request('http://collector/v1/batch', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${btoa('KEY:')}` },
      body: message.send,
    }))
    console.log(JSON.stringify({ status: response.status }))
  } else if (message.close) {
    process.disconnect()
    await close()
  }
})
console.log(JSON.stringify({ started: true, closeCalledAt }))
