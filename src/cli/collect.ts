/**
 * `isomorphic-analytics collect`: runs the collector as a Node server until SIGINT or SIGTERM,
 * then stops accepting, drains deliveries in flight (bounded) and reports what is still pending.
 */
import { createCollector, nodeFetch, startServer, type Collector, type CollectorServer } from '../collector/index.js'
import { durableClosed } from '../collector/create-collector.js'
import { isConfigError } from '../errors.js'
import { count, createLogger, debugEnables } from '../logger.js'
import { maskSecret, maskUrl } from '../secrets.js'
import { ADMIN_ENDPOINTS, type CollectArgs } from './args.js'
import { nameFlags } from './flag-names.js'
import { fileSettings } from './settings-file.js'
import { formatProgress, startProgress } from './progress.js'
import { UsageError } from './usage-error.js'

export interface CollectIo {
  out: (text: string) => void
  err: (text: string) => void
  isTTY: boolean
  debug: string | undefined
  /** Resolves with the signal's name when the process is asked to stop; `onAgain` on a second one. */
  stopSignal(onAgain: (signal: string) => void): Promise<string>
}

/**
 * A secret as the CLI shows it: `…` and its last four characters, or `hidden` when it is too short
 * to show any (a lone `…` reads as cut-off output). How much is shown stays maskSecret's rule.
 */
function shown(secret: string): string {
  const masked = maskSecret(secret)
  return masked === '…' ? 'hidden' : masked
}

/**
 * The queue server's URL for output: its password masked, in the userinfo or in a query parameter
 * (`postgres://user@host/db?password=…`, which pg and ioredis both read), as every URL is shown.
 */
function redactUrl(text: string): string {
  return URL.canParse(text) ? maskUrl(text) : '(not a URL)'
}

function describeSources(args: CollectArgs): string[] {
  return args.config.sources.map((source) => {
    const urls = source.webhooks?.enabled !== false ? (source.webhooks?.urls ?? []) : []
    const target = urls.length === 0
      ? 'not forwarded'
      : `→ ${urls.map((u) => maskUrl(u.url)).join(', ')}${source.webhooks?.sharedSecret ? ' (signed)' : ''}`
    return `  source "${source.name}" (write key ${shown(source.writeKey)}) ${target}`
  })
}

export async function collect(args: CollectArgs, io: CollectIo): Promise<number> {
  const log = createLogger('analytics:cli', debugEnables(io.debug, 'analytics:cli'), (line) => io.err(`${line}\n`))
  if (log.enabled) {
    for (const source of args.config.sources) {
      const secret = source.webhooks?.sharedSecret
      log(`source "${source.name}": write key ${shown(source.writeKey)}, ${count(source.webhooks?.urls?.length ?? 0, 'webhook URL')}${secret ? `, shared secret ${shown(secret)}` : ''}`)
    }
    // Not even its last characters: they would narrow a guess at the one credential with power.
    if (args.config.adminToken !== undefined) log('admin token set (not shown)')
  }
  let collector: Collector
  try {
    // node:http deliveries: several times cheaper than the global fetch, so more events per second.
    collector = createCollector({
      fetch: nodeFetch,
      ...args.config,
      // With a queue server its shared store keeps them (every collector on it sees the same); the file is then only read.
      ...(args.configFile !== undefined && args.config.queue === undefined && { settings: fileSettings(args.configFile) }),
    })
  } catch (error) {
    // A value from a flag is named as the flag (`--webhook`), not as its config path.
    throw isConfigError(error) ? new UsageError(nameFlags(error, args.flagNames)) : error
  }
  // Listening for SIGINT/SIGTERM before starting: start-up can wait up to 10 s for a queue server,
  // and a signal then stops it cleanly too; one sent on seeing the banner drains.
  const stopped = io.stopSignal((again) => {
    io.err(`\n${again} again: exiting without waiting for deliveries.\n`)
  })
  let server: CollectorServer
  const starting = startServer(collector, { port: args.port, host: args.host })
  try {
    const first = await Promise.race([starting, stopped])
    if (typeof first === 'string') {
      // Nothing listened, so nothing was accepted; a server that starts anyway is closed.
      starting.then((late) => late.close(0), () => {})
      io.out(`${first} during start-up: stopped before listening; nothing was accepted.\n`)
      await collector.close(0)
      return 0
    }
    server = first
  } catch (error) {
    await collector.close(0)
    io.err(`Cannot listen on ${args.host}:${args.port}: ${(error as Error).message}\n`)
    return 1
  }
  io.out(`isomorphic-analytics collector listening on ${server.url}\n`)
  for (const line of describeSources(args)) io.out(`${line}\n`)
  if (args.config.adminToken !== undefined) {
    io.out(`  console: ${server.url}/console (sign in with the admin token)\n`)
    io.out(`  admin endpoints: ${ADMIN_ENDPOINTS.join(', ')} (Bearer token)\n`)
    io.out(`  console settings: ${args.config.queue !== undefined
      ? `kept in the queue server${args.configFile !== undefined ? ` (${args.configFile} is not written)` : ''}`
      : args.configFile !== undefined ? `written back to ${args.configFile}` : 'in memory (lost on restart)'}\n`)
  }
  io.out(args.config.queue === undefined
    ? '  deliveries: in this process\'s memory\n'
    : `  deliveries: queue server ${redactUrl(args.config.queue)} (shared with every collector on it)\n`)
  io.out('Press Ctrl+C to stop.\n')

  const progress = startProgress({
    write: io.out,
    // Debug lines go to stderr; in-place rewriting would garble them.
    inPlace: io.isTTY && !debugEnables(io.debug, 'analytics:collector'),
    intervalMs: args.progressInterval,
    stats: () => collector.stats(),
    shared: args.config.queue !== undefined,
  })

  const signal = await stopped
  progress.stop()
  const pendingAtStop = collector.stats().pending
  io.out(`${signal}: stopping. ${count(pendingAtStop, 'delivery', 'deliveries')} pending; waiting up to ${args.drainTimeout} ms.\n`)
  // One budget for both steps, so the process exits within the drain timeout (plus teardown).
  const deadline = Date.now() + args.drainTimeout
  // Stop accepting connections first; requests in flight finish and may queue deliveries.
  await server.close(Math.min(args.drainTimeout, 1_000))
  const report = await collector.close(Math.max(0, deadline - Date.now()))
  io.out(`${formatProgress(report.stats, args.config.queue !== undefined)}\n`)
  if (args.config.queue !== undefined) {
    const reached = report.queueReached !== false
    const said = durableClosed(report.drained, report.stopped, args.drainTimeout, reached)
    io.out(`${said[0].toUpperCase()}${said.slice(1)}${report.drained && reached ? ' for the next collector' : ''}.\n`)
  } else if (report.drained) io.out('All deliveries settled.\n')
  else io.out(`${count(report.pending, 'delivery', 'deliveries')} not delivered (still pending after ${args.drainTimeout} ms; counted in failed).\n`)
  return 0
}
