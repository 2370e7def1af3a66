/**
 * Who sent a request, for limits kept per client: the socket's peer address, which a server
 * adapter (the Node server) attaches to the requests it makes; behind a reverse proxy, with
 * `trustProxy`, the address that proxy appended to `X-Forwarded-For` (the last one: the ones
 * before it are whatever the client wrote there).
 */
import { mark } from './marks.js'

const peers = mark<object, string>()

/** `request` came from `address` (the socket's peer). */
export const markPeer = peers.set

/** What a request made without a server adapter (a `fetch` call in the same process) counts as. */
export const UNKNOWN_ADDRESS = 'unknown'

export function clientAddress(request: Request, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')
    const last = forwarded?.split(',').at(-1)?.trim()
    if (last) return last
  }
  return peers.get(request) ?? UNKNOWN_ADDRESS
}
