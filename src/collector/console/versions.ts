/**
 * The version of a source's settings, for optimistic concurrency: `GET` answers it (`version`, and
 * `ETag` as `"<version>"`), and a `PUT` with `If-Match` is refused (409) when the settings are no
 * longer the ones read. It is a fingerprint of the settings as shown (masked), so every process
 * holding the same settings gives the same version, with no counter to share or lose in a restart.
 * A change hidden by the masks (a header value replaced by one ending in the same four characters)
 * leaves it as it was; nothing is lost by that: a masked value sent back keeps the value held now,
 * whatever it is (./masked.ts).
 */

const encoder = new TextEncoder()

/** 64-bit FNV-1a of `text`'s UTF-8 bytes, as 16 hex digits. Not a secret: of what is shown anyway. */
export function fingerprint(text: string): string {
  let hash = 0xcbf29ce484222325n
  for (const byte of encoder.encode(text)) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n)
  return hash.toString(16).padStart(16, '0')
}

/** The `ETag` of a version. */
export const etag = (version: string) => `"${version}"`

/**
 * Whether an `If-Match` header value matches `version`: `*`, or one of its entity tags (a list, by
 * strong comparison, so a weak `W/"…"` never matches). A tag sent without its quotes is taken too.
 */
export function ifMatches(header: string, version: string): boolean {
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag(version) || t === version
  })
}
