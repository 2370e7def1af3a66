// A collector in its own process, for the durable-mode tests. Env: QUEUE (queue server URL),
// WEBHOOK, WEBHOOK2 (a second URL, if any), SECRET (shared secret), STANDARD_SECRET (a whsec_
// secret: Standard Webhooks signatures too), RETRY_WINDOW (ms), DRAIN
// (drain timeout, ms), CONCURRENCY (deliveries in flight), MAX_PENDING (backlog limit), PORT
// (0: any), RETENTION (ms payloads are kept for replay), COLLECTOR_MODULE (the collector build to run; default ../../../dist/collector.js).
// Also run by bench/durable.mjs. Prints `{"port":…}` once listening; on SIGTERM stops like the
// CLI does (server, then a bounded drain), prints `{"report":…,"closeMs":…}` (closeMs: how long
// `collector.close()` took) and exits; on SIGUSR2 collects garbage and prints `{"heap":…}`, the
// bytes still in use; on SIGHUP prints `{"local":…}`, its own counts (`collector.stats()`).
const env = process.env
const { createCollector, nodeFetch, startServer } = await import(env.COLLECTOR_MODULE ?? '../../../dist/collector.js')
const collector = createCollector({
  sources: [
    {
      writeKey: env.WRITE_KEY ?? 'KEY',
      name: 'web',
      webhooks: {
        urls: [{ url: env.WEBHOOK }, ...(env.WEBHOOK2 ? [{ url: env.WEBHOOK2 }] : [])],
        ...(env.SECRET && { sharedSecret: env.SECRET }),
        ...(env.STANDARD_SECRET && { standardSecrets: [env.STANDARD_SECRET] }),
        ...(env.RETRY_WINDOW && { retryWindow: Number(env.RETRY_WINDOW) }),
      },
    },
  ],
  adminToken: 'admin-token-for-tests',
  // The tests' receivers listen on loopback; settings changed through the console point at them.
  allowPrivateWebhookUrls: true,
  ...(env.QUEUE && { queue: env.QUEUE }),
  ...(env.CONCURRENCY && { deliveryConcurrency: Number(env.CONCURRENCY) }),
  ...(env.MAX_PENDING && { maxPendingDeliveries: Number(env.MAX_PENDING) }),
  ...(env.RETENTION && { retention: Number(env.RETENTION) }),
  fetch: nodeFetch,
  onError: (error) => console.error('collector error', error),
})
const server = await startServer(collector.fetch, { port: Number(env.PORT ?? 0), host: '127.0.0.1' })
// The handlers go first: a parent that reads the port line may signal at once.
process.on('SIGTERM', async () => {
  await server.close(100)
  const closing = Date.now()
  const report = await collector.close(Number(env.DRAIN ?? 2000))
  console.log(JSON.stringify({ report, closeMs: Date.now() - closing }))
  process.exit(0)
})
process.on('SIGHUP', () => console.log(JSON.stringify({ local: collector.stats() })))
process.on('SIGUSR2', async () => {
  const { default: v8 } = await import('node:v8')
  const { default: vm } = await import('node:vm')
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc')
  gc()
  console.log(JSON.stringify({ heap: process.memoryUsage().heapUsed }))
})
console.log(JSON.stringify({ port: server.port }))
