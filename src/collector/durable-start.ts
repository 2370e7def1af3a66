/**
 * The collector with a `queue`: made once durable mode (./durable.js, the one `import()` in
 * create-collector.ts) is loaded, a moment after `createCollector` returns. What is called before
 * then waits for it, with the same answers: requests and audience syncs are answered by the
 * collector made; a deletion is checked at once (its errors thrown as ever) and sent once it is
 * made; `stats()` counts nothing yet (nothing can have happened); `close()` closes it once made.
 * If durable mode cannot be loaded (a package or bundle without its file), that is reported once
 * to `onError`, every request is answered 500 `INTERNAL`, and `close()` resolves at once.
 */
import { ClientClosedError, messageOf } from '../errors.js'
import { sendLater } from './admin/dispatch.js'
import { deletionTargets, type AdminState, type AudienceSyncRequest, type DeletionRequest, type Dispatch } from './admin/requests.js'
import { collectorStats, type Collector, type CollectorStats, type DrainReport } from './collector-api.js'
import type { ResolvedConfig } from './config.js'
import { coreOf, withCore, type CollectorCore, type RequestHead } from './http/direct.js'
import { HttpProblem, type JsonAnswer } from './http/errors.js'
import { markAdmin } from './http/exposure.js'
import { checkRequest } from './http/handler.js'
import { markReadiness, readinessOf } from './http/readiness.js'
import type { SourceRuntime } from './sources.js'
import { Tally } from './stats.js'

/** A collector made, and its admin state (where a deletion requested before then is sent). */
export interface Assembled {
  collector: Collector
  admin: AdminState
}

/** The collector `make` makes (from `config`, with `sources`), returned before it is made. */
export function startDurable(config: ResolvedConfig, sources: readonly SourceRuntime[], make: () => Promise<Assembled>): Collector {
  let made: Assembled | undefined
  let core: CollectorCore | undefined
  let failure: Error | undefined
  const making = make().then(
    (assembled) => {
      core = coreOf(assembled.collector.fetch)
      return (made = assembled)
    },
    (cause: unknown) => {
      failure = new Error(`The collector's durable mode (its \`queue\` option) could not be loaded: ${messageOf(cause)}`, { cause })
      config.onError(failure)
      return undefined
    },
  )
  const unloaded = () => new HttpProblem(500, 'INTERNAL', failure!.message).toAnswer()
  const byName = new Map(sources.map((source) => [source.name, source]))
  let closing: Promise<DrainReport> | undefined

  const stats = (): CollectorStats => made?.collector.stats() ?? collectorStats(new Tally(sources.map((s) => s.name)), { pending: 0, retrying: 0 })
  async function whenMade(head: RequestHead, full: () => Request): Promise<Response | JsonAnswer> {
    await making
    return core ? core(head, full) : unloaded()
  }
  const fetch = withCore(async (request: Request) => {
    const assembled = made ?? (await making)
    if (assembled) return assembled.collector.fetch(request)
    checkRequest(request)
    return unloaded().toResponse()
  }, (head, full) => (core ? core(head, full) : whenMade(head, full)))
  if (config.adminToken !== undefined) markAdmin(fetch)
  markReadiness(fetch, making.then((assembled) => assembled && readinessOf(assembled.collector.fetch)).then(() => {}))

  return {
    fetch,
    requestDeletion(request: DeletionRequest): Dispatch {
      if (closing !== undefined) throw new ClientClosedError('requestDeletion')
      if (made) return made.collector.requestDeletion(request)
      const admin = making.then((assembled) => assembled?.admin ?? Promise.reject(failure!))
      return sendLater(admin, deletionTargets(byName, request), { origin: 'deletion' })
    },
    async syncAudience(request: AudienceSyncRequest): Promise<Dispatch> {
      if (closing !== undefined) throw new ClientClosedError('syncAudience')
      const assembled = made ?? (await making)
      if (!assembled) throw failure!
      return assembled.collector.syncAudience(request)
    },
    stats,
    close(timeoutMs = config.drainTimeout) {
      closing ??= making.then((assembled) => assembled
        ? assembled.collector.close(timeoutMs)
        : { drained: true, pending: 0, stopped: 0, queueReached: false, stats: stats() })
      return closing
    },
    get closed() {
      return closing !== undefined
    },
  }
}
