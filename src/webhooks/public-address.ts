/**
 * Which addresses a webhook URL set through the console or the admin API may reach: public ones
 * only, unless the operator allows private networks (`allowPrivateWebhookUrls`). Otherwise anyone
 * holding the admin token could make the collector call its own machine, its network or the cloud
 * metadata service (169.254.169.254), and read the answers' status and timing in the console.
 *
 * Checked twice: when the URL is saved (an address written in the URL, in any numeric spelling,
 * which the WHATWG URL parser turns into one form: `0x7f000001`, `2130706433` and `127.1` are all
 * `127.0.0.1`; and `localhost`), and at each delivery against the address a name resolves to then
 * (`checkAddress` of the Node transport, in its DNS lookup): a name that resolves to a public
 * address when saved and to a private one later does not pass.
 */
import ipaddr from 'ipaddr.js'

/** How a refused range is named in messages (ipaddr.js's names, said as an operator would). */
const RANGE_NAMES: Record<string, string> = {
  loopback: 'loopback',
  private: 'private',
  linkLocal: 'link-local (the cloud metadata service is one)',
  carrierGradeNat: 'carrier-grade NAT',
  uniqueLocal: 'unique-local',
  ipv4Mapped: 'IPv4-mapped',
  unspecified: 'unspecified',
  multicast: 'multicast',
  broadcast: 'broadcast',
  reserved: 'reserved',
}

/**
 * Why `address` (an IP address, IPv6 with or without brackets) may not be reached, as
 * "a loopback address"; `undefined` when it is a public unicast address or not an IP address.
 */
export function refusedAddress(address: string): string | undefined {
  const bare = address.startsWith('[') ? address.slice(1, -1) : address
  if (!ipaddr.isValid(bare)) return undefined
  const range = ipaddr.parse(bare).range()
  if (range === 'unicast') return undefined
  return `a ${RANGE_NAMES[range] ?? `special-purpose (${range})`} address`
}

/** `localhost` and its subdomains (RFC 6761: always loopback), with or without the final dot. */
const LOCALHOST = /(?:^|\.)localhost\.?$/i

/**
 * Why `url`'s host may not be reached, judged from the URL alone (an IP address written in it, or
 * `localhost`); `undefined` for a public address or a name (its addresses are checked when it is
 * resolved, at delivery).
 */
export function refusedHost(url: string): string | undefined {
  let hostname: string
  try {
    hostname = new URL(url).hostname
  } catch {
    return undefined
  }
  if (LOCALHOST.test(hostname)) return 'a loopback address (`localhost`)'
  return refusedAddress(hostname)
}

/** The advice every refusal ends with. */
export const ALLOW_PRIVATE = 'URLs set through the console or the admin API may reach public addresses only; to allow private networks (local development), start the collector with `allowPrivateWebhookUrls: true` (`--allow-private-webhook-urls`), or put the URL in its config.'
