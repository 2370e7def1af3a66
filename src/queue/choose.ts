/**
 * The one place a client's queue is chosen, when it is made: the page-persisted queue with option
 * `persist`; the byte store with a transport that reads pooled bodies (the Node transport); else
 * the text queue.
 */
import { BodyBuilder } from '../client/batcher.js'
import type { Transport } from '../transport/types.js'
import type { MessageQueue } from './message-queue.js'
import { ByteQueue } from './byte-queue.js'
import { persistedQueue, type Recover } from './persisted-queue.js'
import { textQueue } from './text-queue.js'

export interface QueueChoice {
  readonly writeKey: string
  readonly plainText: boolean
  readonly persist: boolean
  readonly transport: Transport
}

export function createQueue(options: QueueChoice, recover: Recover): MessageQueue {
  const envelope = new BodyBuilder(options.writeKey, options.plainText)
  if (options.persist) return persistedQueue(options.writeKey, envelope, recover)
  // (The browser build has no Node transport, so no byte store: the guard drops it from that build.)
  if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__) && options.transport.takesPooledBodies) return new ByteQueue(envelope)
  return textQueue(envelope)
}
