/**
 * Durable mode: the collector's parts in a queue server (BullMQ's delivery queue, the shared
 * counters, the bus between processes, shared memberships and settings, the console shared by
 * every process). `createCollector` loads this module with one `import()`, only when a `queue` is
 * configured (durable-start.ts), so a bundle serving the embedded collector (a worker, an edge
 * function) leaves it, and what it imports, in a chunk of its own that is never loaded. BullMQ and
 * the servers' clients are loaded later still, when connecting (state/drivers.ts).
 */
import type { Logger } from '../logger.js'
import type { QueueServer } from './config.js'
import type { ConsoleRecorder } from './console/recorder.js'
import type { SettingsStore } from './console/settings.js'
import { shareConsole, type SharedConsole } from './console/shared.js'
import { BullmqQueue } from './delivery/bullmq-queue.js'
import { settlesWithin } from './settles-within.js'
import { QueueBus } from './state/bus.js'
import type { MembershipStore } from './state/memberships.js'
import type { KeptWindows } from './replay/kept.js'
import { SharedMemberships } from './state/shared-memberships.js'
import { PgSockets } from './state/pg-sockets.js'
import { queueSettings } from './state/shared-settings.js'
import { queueHealth } from './state/shared-health.js'
import type { HealthStore } from './health/store.js'
import { SharedState } from './state/shared-state.js'

/** What `DurableMode.deliveryQueue` takes: BullMQ's queue options but those the mode gives itself. */
type QueueOptions = Omit<ConstructorParameters<typeof BullmqQueue>[0], 'server' | 'onError' | 'counters' | 'traces'>

/** One collector's parts in the queue server `queue`, made in the order the collector needs them. */
export class DurableMode {
  /** The queue server, with (PostgreSQL) the sockets `close` may have to drop. */
  readonly #server: QueueServer
  /** Counters every process on the server shares (the collector's `Tally` mirrors into them). */
  readonly shared: SharedState
  /** Tells every process of settings changes and console records. */
  readonly #bus: QueueBus
  #console: SharedConsole | undefined
  /**
   * Where the queue server's failures go: `onError`, except those of the connections `close`
   * dropped (the collector's own doing: logged).
   */
  readonly report: (error: unknown) => void

  constructor(queue: QueueServer, onError: (error: unknown) => void, log: Logger) {
    const sockets = queue.kind === 'postgres' ? new PgSockets() : undefined
    this.#server = { ...queue, ...(sockets && { sockets }) }
    this.report = (error) => (sockets?.dropped ? log(`a connection dropped by close: ${String(error)}`) : onError(error))
    this.shared = new SharedState(this.#server)
    this.#bus = new QueueBus(this.#server, this.report)
  }

  /** The console's record shared with the other processes (before `deliveryQueue`: it reports attempts there). */
  shareConsole(recorder: ConsoleRecorder): SharedConsole {
    return (this.#console = shareConsole(recorder, this.#bus))
  }

  /** The delivery queue in the server (after `kept`, when payloads are kept). */
  deliveryQueue(options: QueueOptions): BullmqQueue {
    const traces = this.#console?.traces
    const retention = this.#retention
    return (this.#queue = new BullmqQueue({ ...options, server: this.#server, onError: this.report, counters: this.shared, ...(traces && { traces }), ...(retention !== undefined && { retention }) }))
  }

  #retention: number | undefined
  #queue: BullmqQueue | undefined

  /** Settled payloads kept for replay in the server, `retention` ms each, in the delivery queue's completed jobs. */
  kept(retention: number): KeptWindows {
    this.#retention = retention
    return {
      window: async (source, from, to, failedOnly) => {
        if (this.#queue === undefined) throw new Error('The delivery queue is not open: payloads are kept in its jobs.')
        return this.#queue.window(source, from, to, failedOnly)
      },
    }
  }

  /** Audience memberships in the server, so every process diffs against the same base. */
  memberships(): MembershipStore {
    return new SharedMemberships(this.shared)
  }

  /** Endpoint health kept in the server, merged into by every process. */
  health(): HealthStore {
    return queueHealth(this.#bus)
  }

  /** Console settings kept in the server. */
  settings(): SettingsStore {
    return queueSettings(this.#bus, this.report)
  }

  /** Resolves once the bus is connected (this process hears the others); never rejects. */
  ready(): Promise<void> {
    return this.#bus.ready().catch(() => {})
  }

  /**
   * After the delivery queue's drain: stops the shared console and says goodbye on the bus; a
   * bus that has not by `deadline` (ms since the epoch) waits on a server that does not answer,
   * and its connections are dropped.
   */
  async close(deadline: number): Promise<void> {
    this.#console?.close()
    if (!(await settlesWithin(this.#bus.close(), Math.max(0, deadline - Date.now())))) this.#server.sockets?.drop()
  }
}
