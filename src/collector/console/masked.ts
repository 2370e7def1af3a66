/**
 * Masked values, both ways. The settings endpoints show the shared secret, every static header
 * value (headers often carry credentials: `Authorization: Bearer …`) and the credentials in each
 * URL (`?token=…1234`, as logs show them: `maskUrl`) masked. A change may send a
 * masked value back exactly as it was shown, meaning "keep the value held now": so a client that
 * reads the settings, edits one thing and sends them back changes only that one thing. A masked
 * value never becomes a value: one that stands for nothing held here is refused (400 naming the
 * field), since the real value cannot be inferred from it.
 *
 * A header's value is kept only for the same header name (compared without case, as HTTP does)
 * and the same URL, or the URL at the same place changed within its origin (another path or
 * query on the same scheme, host and port: the one-character fix should not force retyping every
 * header). Renaming a header, or moving it to another origin, needs its value sent again, so a
 * masked credential is never sent to a server it was not set for. Likewise a masked URL
 * stands only for a URL held now that is shown exactly so: another host or path around the mask
 * is refused, never sent the credential.
 */
import { ConfigError } from '../../errors.js'
import { isPlainObject } from '../../message/validate.js'
import { hasMaskedCredential, maskUrl } from '../../secrets.js'
import type { SourceWebhooksConfig, WebhookUrlConfig } from '../webhooks-config.js'

/** What every masked value starts with. It is not ASCII, so it is never a valid header value. */
export const MASK = '••••'

/** At most the last four characters, and none of a short secret. */
export const mask = (secret: string) => `${MASK}${secret.length >= 12 ? secret.slice(-4) : ''}`

const isMasked = (value: unknown): value is string => typeof value === 'string' && value.trimStart().startsWith(MASK)

/** `headers` with each value masked (as sent: without surrounding spaces, which the destination trims). */
export const maskHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, mask(value.trim())]))

const cannotKeep = (option: string, reason: string) =>
  new ConfigError(option, `Expected \`${option}\` to be a new value, or the masked value shown to keep the current one; got a masked value that cannot be kept: ${reason}. Send the value itself.`)

/** The value `masked` stands for: `held` when it was shown as `masked`; else a `ConfigError` at `option`. */
function kept(option: string, masked: string, held: string | undefined, why: string, shown = mask): string {
  if (held !== undefined && shown(held) === masked) return held
  throw cannotKeep(option, held === undefined ? why : 'it is not the masked form of the value held now (was it changed since it was read?)')
}

/** The same URL as written, or as parsed (`HTTPS://H.test/a` is `https://h.test/a`). */
function sameUrl(a: unknown, b: string): boolean {
  if (a === b) return true
  try {
    return typeof a === 'string' && new URL(a).href === new URL(b).href
  } catch {
    return false
  }
}

/** The same scheme, host and port (`https://h.test/a` and `https://h.test/b?x=1`). */
function sameOrigin(a: unknown, b: string): boolean {
  try {
    return typeof a === 'string' && new URL(a).origin === new URL(b).origin
  } catch {
    return false
  }
}

/**
 * The URL held now that `url` (with a masked credential) was shown for: the one at the same place
 * if it is shown so, else the only one shown so; else a `ConfigError` (two URLs that differ only
 * in a credential may look the same masked: then the place tells them apart).
 */
function keptUrl(url: string, i: number, held: readonly WebhookUrlConfig[], at: string): string {
  const shownAs = (h: WebhookUrlConfig) => sameUrl(url, maskUrl(h.url))
  if (held[i] !== undefined && shownAs(held[i])) return held[i].url
  const matches = held.filter(shownAs)
  if (matches.length === 1) return matches[0].url
  throw cannotKeep(`${at}.urls[${i}].url`, matches.length === 0
    ? 'it is not the masked form of a URL held now (its host, path or another part was changed, or the URL was changed since it was read)'
    : 'several URLs held now are shown so, and the one at its place is not one of them')
}

function unmaskUrl(input: unknown, i: number, held: readonly WebhookUrlConfig[], at: string): unknown {
  if (!isPlainObject(input)) return input
  const entry = typeof input.url === 'string' && hasMaskedCredential(input.url) ? { ...input, url: keptUrl(input.url, i, held, at) } : input
  if (!isPlainObject(entry.headers)) return entry
  const headers = entry.headers
  if (!Object.values(headers).some(isMasked)) return entry
  const heldUrl = held.find((h) => sameUrl(entry.url, h.url)) ?? (held[i] && sameOrigin(entry.url, held[i].url) ? held[i] : undefined)
  const heldHeaders = Object.entries(heldUrl?.headers ?? {})
  const unmasked = Object.fromEntries(Object.entries(headers).map(([name, value]) => {
    if (!isMasked(value)) return [name, value]
    const option = `${at}.urls[${i}].headers[${JSON.stringify(name)}]`
    const why = heldUrl
      ? `its URL has no header \`${name}\` now (a renamed header needs its value again)`
      : 'its URL is not one that holds headers now (a header value is kept only for the URL it was set for, or that URL changed within its origin)'
    const match = heldHeaders.find(([heldName]) => heldName.toLowerCase() === name.toLowerCase())
    return [name, kept(option, value.trim(), match?.[1], why, (v) => mask(v.trim()))]
  }))
  return { ...entry, headers: unmasked }
}

/**
 * `change` (a settings change as sent: `{ enabled?, urls?, sharedSecret? }`, not yet checked)
 * with each masked value replaced by the value it stands for in `held` (the settings now); a
 * masked shared secret shown for the current one is the same as leaving `sharedSecret` out.
 * Throws a `ConfigError` naming the first masked value that stands for nothing held (`at`: the
 * source's path, `sources[0].webhooks`).
 */
export function unmask(change: Record<string, unknown>, held: SourceWebhooksConfig, at: string): Record<string, unknown> {
  const result = { ...change }
  if (isMasked(change.sharedSecret)) result.sharedSecret = kept(`${at}.sharedSecret`, change.sharedSecret, held.sharedSecret, 'no shared secret is set now')
  if (Array.isArray(change.urls)) result.urls = change.urls.map((entry: unknown, i) => unmaskUrl(entry, i, held.urls ?? [], at))
  return result
}
