/**
 * The transport of a destination whose URLs were set through the console or the admin API: a URL
 * that is not the config's own may reach public addresses only (../../webhooks/public-address.ts).
 * An address written in the URL (or `localhost`) is refused before anything is sent; a name's
 * addresses are checked by the Node transport in its DNS lookup, as it connects. A `fetch` option
 * of the user's own gets the first check only: where it connects is its business.
 */
import { platformTransport, transportOf, type FetchLike, type Transport, type TransportInit } from '../../platform/transport.js'
import { maskUrl } from '../../secrets.js'
import { ALLOW_PRIVATE, refusedAddress, refusedHost } from '../../webhooks/public-address.js'

/** `fetch` (the collector's option, or the default transport) restricted to public addresses, but for `trusted` URLs. */
export function publicOnly(fetch: FetchLike | undefined, trusted: ReadonlySet<string>): FetchLike {
  const base = fetch === undefined ? platformTransport() : transportOf(fetch)
  const send = (url: string, init: TransportInit) => {
    if (trusted.has(url)) return base(url, init)
    const reason = refusedHost(url)
    if (reason !== undefined) {
      return Promise.reject(Object.assign(new Error(`Refused to deliver to ${maskUrl(url)}: its host is ${reason}. ${ALLOW_PRIVATE}`), { code: 'EADDRREFUSED' }))
    }
    return base(url, { ...init, checkAddress: refusedAddress } as TransportInit)
  }
  return Object.defineProperties(send, {
    takesTimeout: { get: () => base.takesTimeout === true },
    takesPooledBodies: { get: () => base.takesPooledBodies === true },
  }) as Transport as unknown as FetchLike
}
