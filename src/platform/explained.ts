/**
 * The explanations and the quick check of the server and worker platforms (./server.ts,
 * ./worker.ts): every "did you mean", the missing write key's hint, system error codes. The
 * browser platform has plainer ones of its own, for its budget (./browser.ts).
 */
import { MISSING_KEY_HINT, PEER_OPTIONS } from '../client/explain.js'
import type { MessageType } from '../message/types.js'
import { passes } from '../message/validate.js'

export { closest, refuseUnknownKeys } from '../closest.js'
export { endpointGuess, formatDetail } from '../client/explain.js'
export { readCapped, transportFailure } from '../transport/failure.js'

export const missingKeyHint = MISSING_KEY_HINT
export const peerOptions: Readonly<Record<string, string>> | undefined = PEER_OPTIONS
export const quickCheck = (type: string, message: Record<string, unknown>): boolean => passes(type as MessageType, message)
