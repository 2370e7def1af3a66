/**
 * The real collector on loopback, with a recorder in front of it: every message of every batch the
 * collector accepted (so a message sent twice is seen twice, even where the collector would
 * deduplicate it), and a switch that holds batches unanswered (in flight at the client, never
 * passed to the collector), for a process that is stopped while it waits.
 */
import { createCollector, startServer, type Collector, type CollectorServer } from '../../../src/collector/index.js'

export interface RecordedMessage {
  messageId: string
  type: string
  event?: string
  name?: string
  userId?: string
  anonymousId?: string
  properties?: Record<string, unknown>
  context?: Record<string, unknown>
}

export interface RecordingCollector {
  readonly url: string
  readonly collector: Collector
  /** Messages of the batches the collector answered 200, in order of arrival. */
  readonly messages: RecordedMessage[]
  /** Batches held unanswered so far. */
  readonly held: number
  /** While true, batches are held unanswered. */
  hold: boolean
  close(): Promise<void>
}

export async function startRecordingCollector(writeKeys: string[]): Promise<RecordingCollector> {
  const collector = createCollector({ sources: writeKeys.map((writeKey, n) => ({ writeKey, name: `source-${n}` })) })
  const messages: RecordedMessage[] = []
  let held = 0
  const state = { hold: false }
  const server: CollectorServer = await startServer(async (request: Request) => {
    if (request.method !== 'POST' || !new URL(request.url).pathname.endsWith('/v1/batch')) return collector.fetch(request)
    if (state.hold) {
      held++
      return new Promise<Response>(() => {})
    }
    const body = await request.clone().text()
    const response = await collector.fetch(request)
    if (response.status === 200) messages.push(...(JSON.parse(body) as { batch: RecordedMessage[] }).batch)
    return response
  }, { port: 0 })
  return {
    url: server.url,
    collector,
    messages,
    get held() {
      return held
    },
    get hold() {
      return state.hold
    },
    set hold(value: boolean) {
      state.hold = value
    },
    async close() {
      await server.close()
      await collector.close()
    },
  }
}
