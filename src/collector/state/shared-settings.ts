/**
 * The console's settings store in the queue server (kind `queue`), shared by every collector
 * process on it: each source's Webhooks settings as JSON, in a Redis hash or a PostgreSQL table,
 * shared secret included (whoever can read the queue server can read them; they are never
 * logged). Saving tells the other processes on the bus (the source's name only, never the
 * settings); each of them reads the source's settings from the server and applies them to its
 * next message.
 *
 * A change sent with `If-Match` is kept only if the server still holds the settings this process
 * last had from it (`saveIf`, one step there: ./json-rows.ts). So of two processes changing the
 * same source from the same version, one wins, even before the other has heard of it.
 */
import type { SavedIf, SettingsStore } from '../console/settings.js'
import type { SourceWebhooksConfig } from '../config.js'
import type { QueueBus } from './bus.js'
import { sharedRows } from './json-rows.js'

const HASH = 'isomorphic-analytics:settings'
const TABLE = 'isomorphic_analytics_settings'
const TOPIC = 'settings'

const parse = (json: string) => JSON.parse(json) as SourceWebhooksConfig

export function queueSettings(bus: QueueBus, report: (error: unknown) => void): SettingsStore {
  const open = sharedRows(bus, { hash: HASH, table: TABLE, key: 'source', value: 'webhooks' })
  return {
    kind: 'queue',
    durable: true,
    async save(source, webhooks) {
      await (await open()).write(source, JSON.stringify(webhooks))
      await bus.publish(TOPIC, { source }, { now: true })
      return true
    },
    // `previous` was parsed from (or written as) `JSON.stringify`'s text, which writing it again gives back.
    async saveIf(source, webhooks, previous): Promise<SavedIf> {
      const written = await (await open()).writeIf(source, JSON.stringify(webhooks), previous === undefined ? undefined : JSON.stringify(previous))
      if (!written.kept) return { kept: false, held: written.held === undefined ? undefined : parse(written.held) }
      await bus.publish(TOPIC, { source }, { now: true })
      return { kept: true, durable: true }
    },
    async load() {
      const all = await (await open()).readAll()
      return Object.fromEntries(Object.entries(all).map(([source, json]) => [source, parse(json)]))
    },
    watch(onChange) {
      return bus.subscribe((topic, data) => {
        const source = topic === TOPIC ? (data as { source?: unknown } | null)?.source : undefined
        if (typeof source !== 'string') return
        open()
          .then((r) => r.read(source))
          .then((json) => json !== undefined && onChange(source, parse(json)))
          .catch((error: unknown) => report(new Error(`Could not read the console settings of source "${source}" from the queue server`, { cause: error })))
      })
    },
  }
}
