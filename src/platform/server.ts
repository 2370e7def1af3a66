/**
 * The platform of Node, Bun and Deno (see ./platform.ts): the Node transport and the byte store
 * on Node, the process's exit hooks and the spill, timers that never keep the process alive, the
 * `DEBUG` environment variable, pooled UUIDs, and every explanation. Also the platform of the
 * webhooks, the collector and the testing kit, wherever they run (each probe here finds nothing
 * in a worker).
 */
import { BodyBuilder } from '../message/wire.js'
import { ByteQueue } from '../queue/byte-store.js'
import type { MessageQueue, QueueChoice } from '../queue/message-queue.js'
import { persistedQueue, type Recover } from '../queue/persisted-queue.js'
import { textQueue } from '../queue/text-queue.js'
import type { HttpAnswer } from '../transport/types.js'
import { drainBody } from '../transport/read-stream.js'
import { Stop } from '../transport/stop.js'
import type { ProcessHooks } from './platform.js'
import {
  bufferLength, holdProcess, onProcessExit, onProcessIdleExit, processExiting, readDebugSetting, setBackgroundTimeout,
} from './server-runtime.js'
import { absolutePath, openSpill } from './spill.js'
import { platformTransport } from './transport.js'
import { canPersist, consoleSink, identityStore, isBrowserLike, onPageHide } from './web.js'

export * from './explained.js'
export { randomUUID } from './server-runtime.js'
export { canPersist, holdProcess, identityStore, isBrowserLike, onPageHide, readDebugSetting, setBackgroundTimeout }

export const defaultTransport = platformTransport
export const utf8ByteLength = bufferLength
export const logSink = consoleSink
export const createStop = (): Stop => new Stop()
export const discardBody = (response: HttpAnswer, timeoutMs: number): Promise<void> => drainBody(response, timeoutMs, setBackgroundTimeout)

export const processHooks: ProcessHooks | undefined = {
  onIdleExit: onProcessIdleExit,
  onExit: onProcessExit,
  exiting: processExiting,
  spillDir: absolutePath,
  openSpill,
}

/**
 * The page-persisted queue with option `persist` (a server build in a page), the byte store with
 * a transport that reads pooled bodies (the Node transport), else the text queue.
 */
export function createQueue(choice: QueueChoice, recover: Recover): MessageQueue {
  const envelope = new BodyBuilder(choice.writeKey, choice.plainText, bufferLength)
  if (choice.persist) return persistedQueue(choice.writeKey, envelope, recover)
  if (choice.transport.takesPooledBodies) return new ByteQueue(envelope)
  return textQueue(envelope)
}
