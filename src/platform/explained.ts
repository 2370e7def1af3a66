/**
 * The explanations and the quick check of the server and worker platforms (./server.ts,
 * ./worker.ts): every "did you mean", the missing write key's hint, system error codes. The
 * browser platform has plainer ones of its own, for its budget (./browser.ts).
 */
import { MISSING_KEY_HINT, PEER_OPTIONS } from '../client/explain.js'

export { closest, refuseUnknownKeys } from '../closest.js'
export { endpointGuess, formatDetail } from '../client/explain.js'
export { readCapped, transportFailure } from '../transport/failure.js'
export { passes as quickCheck } from '../message/validate.js'

export const missingKeyHint = MISSING_KEY_HINT
export const peerOptions: Readonly<Record<string, string>> | undefined = PEER_OPTIONS
