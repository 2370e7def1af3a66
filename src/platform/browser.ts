/**
 * The platform of browser pages and browser workers (see ./platform.ts), within the browser
 * budget: the global `fetch`, the text queue or the page-persisted one, `localStorage.debug`, and
 * plainer explanations (an unknown option is named without a guess, a failed fetch by its
 * message; a refusal's body is read whole: a page's collector answers briefly).
 */
import { BodyBuilder } from '../message/wire.js'
import { ConfigError, messageOf, NetworkError } from '../errors.js'
import type { MessageType } from '../message/types.js'
import type { MessageQueue, QueueChoice } from '../queue/message-queue.js'
import { persistedQueue, type Recover } from '../queue/persisted-queue.js'
import { textQueue } from '../queue/text-queue.js'
import { MAX_REASON_BYTES } from '../transport/failure.js'
import type { HttpAnswer } from '../transport/types.js'
import type { ProcessHooks } from './platform.js'
import {
  boundedTimeout, canPersist, consoleSink, encodedLength, globalFetch, identityStore, isBrowserLike, nothing, onPageHide,
  readLocalStorageDebug, webRandomUUID,
} from './web.js'

export { canPersist, identityStore, isBrowserLike, onPageHide }

export const defaultTransport = () => globalFetch
export const randomUUID = webRandomUUID
export const utf8ByteLength = encodedLength
export const readDebugSetting = readLocalStorageDebug
export const setBackgroundTimeout = boundedTimeout
export const holdProcess = nothing
export const logSink = consoleSink
export const createStop = (): AbortController => new AbortController()
export const processHooks: ProcessHooks | undefined = undefined
export const closest = (_typed: string, _known: readonly string[]): string | undefined => undefined
export const missingKeyHint = ''
export const peerOptions: Readonly<Record<string, string>> | undefined = undefined
export const formatDetail: ((value: unknown) => string) | undefined = undefined
export const endpointGuess = (_value: unknown): string => ''
export const quickCheck = (_type: MessageType, _message: Record<string, unknown>): boolean => false

export function refuseUnknownKeys(object: object, known: ReadonlySet<string>, at: string): void {
  for (const key of Object.keys(object)) if (!known.has(key)) throw new ConfigError(at ? `${at}.${key}` : key, `Unknown option \`${at ? `${at}.${key}` : key}\`.`)
}

export const transportFailure = (url: string, error: unknown): Error => new NetworkError(`Request to ${url} failed: ${messageOf(error)}`, { cause: error })

export const readCapped = async (response: HttpAnswer): Promise<string> => (await response.text()).slice(0, MAX_REASON_BYTES)

export async function discardBody(response: HttpAnswer): Promise<void> {
  try {
    await response.arrayBuffer()
  } catch {
    // Nothing to do: the answer's status is all we need.
  }
}

/** The page-persisted queue with option `persist`, else the text queue. */
export function createQueue(choice: QueueChoice, recover: Recover): MessageQueue {
  const envelope = new BodyBuilder(choice.writeKey, choice.plainText, encodedLength)
  return choice.persist ? persistedQueue(choice.writeKey, envelope, recover) : textQueue(envelope)
}
