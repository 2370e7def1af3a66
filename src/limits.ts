/** Limits of the service's HTTP tracking API, shared by the client and the collector. */

/** A single message may serialise to at most this many UTF-8 bytes. */
export const MAX_MESSAGE_BYTES = 32_000
/**
 * Objects and arrays may nest at most this many levels deep in a message, the message itself being
 * the first. Deeper JSON overflows the stack of recursive code (`JSON.stringify` gives up near a
 * few thousand levels; many JSON parsers in webhook receivers stop at 100 or 512).
 */
export const MAX_DEPTH = 100
/** A request body (one batch) may be at most this many UTF-8 bytes, before any compression. */
export const MAX_BATCH_BYTES = 500_000
/**
 * What the collector accepts: the service's own limits, 32 KiB a message and 500 KiB a request
 * body, which the vendor's libraries fill up to (analytics-ruby, -java and Analytics.NET batch up
 * to 512,000 bytes; the Node SDKs' events may be 32,768), above this client's (32,000 and 500,000,
 * from the Go v2 library), so none of theirs is refused where the service would take it.
 */
export const INGEST_MAX_MESSAGE_BYTES = 32 * 1024
export const INGEST_MAX_BODY_BYTES = 500 * 1024
/** A browser's `fetch(…, { keepalive: true })` may carry at most this many body bytes in all. */
export const KEEPALIVE_BODY_BYTES = 65_536

const NON_ASCII = /[^\x00-\x7f]/

/** Exact UTF-8 byte length of a string, without allocating an encoded copy. */
export function utf8Length(text: string): number {
  // Most JSON is ASCII: one native scan answers it, far cheaper than the loop below.
  if (!NON_ASCII.test(text)) return text.length
  let bytes = text.length
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        // A surrogate pair is 2 UTF-16 units and 4 UTF-8 bytes.
        bytes += 2
        i++
      } else bytes += 2
    } else bytes += 2
  }
  return bytes
}
