/**
 * The platform of workers and edge runtimes without a page (see ./platform.ts): Cloudflare
 * Workers, Vercel and Netlify Edge, and any web-standard runtime. The global `fetch`, the text
 * queue, timers as they are (a worker has no process to keep alive), and every explanation.
 */
import { BodyBuilder } from '../message/wire.js'
import type { MessageQueue, QueueChoice } from '../queue/message-queue.js'
import type { Recover } from '../queue/persisted-queue.js'
import { textQueue } from '../queue/text-queue.js'
import type { HttpAnswer } from '../transport/types.js'
import { drainBody } from '../transport/read-stream.js'
import { Stop } from '../transport/stop.js'
import type { ProcessHooks } from './platform.js'
import { readDebugSetting } from './server-runtime.js'
import { boundedTimeout, consoleSink, encodedLength, globalFetch, identityStore, isBrowserLike, nothing, webRandomUUID } from './web.js'

export * from './explained.js'
export { identityStore, isBrowserLike, readDebugSetting }

export const defaultTransport = () => globalFetch
export const randomUUID = webRandomUUID
export const utf8ByteLength = encodedLength
export const setBackgroundTimeout = boundedTimeout
export const canPersist = (): boolean => false
export const onPageHide: (handler: () => void) => () => void = nothing
export const holdProcess = nothing
export const logSink = consoleSink
export const createStop = (): Stop => new Stop()
export const processHooks: ProcessHooks | undefined = undefined
export const discardBody = (response: HttpAnswer, timeoutMs: number): Promise<void> => drainBody(response, timeoutMs, boundedTimeout)

/** The text queue (a worker has no page to persist into: option `persist` keeps messages in memory). */
export function createQueue(choice: QueueChoice, _recover: Recover): MessageQueue {
  return textQueue(new BodyBuilder(choice.writeKey, choice.plainText, encodedLength))
}
