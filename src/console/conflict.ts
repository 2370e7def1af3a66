/**
 * After a 409 (the settings were saved elsewhere since the form read them): the form keeps what
 * was typed, and this lists how it differs from what is saved now, field by field, named by the
 * labels on the page. Values are compared as shown (header values and URL credentials masked on
 * both sides), so a value left as it was shown is not a difference.
 */
import type { SourceView } from './api.js'

/** What the form holds: the checkbox, each URL row's two fields, and whether a new secret is typed or its removal ticked. */
export interface Typed {
  enabled: boolean
  urls: Array<{ url: string; headers: string }>
  secret: 'typed' | 'removed' | 'kept'
}

const quoted = (text: string) => (text.trim() === '' ? 'nothing' : JSON.stringify(text.trim()))

/** Each difference between `typed` and `saved` in words ("URL 2: yours "…", saved "…""); none when they agree. */
export function differences(typed: Typed, saved: SourceView['webhooks'], headerText: (headers: Record<string, string> | undefined) => string): string[] {
  const out: string[] = []
  if (typed.enabled !== saved.enabled) out.push(`Forward to webhooks: yours ${typed.enabled ? 'on' : 'off'}, saved ${saved.enabled ? 'on' : 'off'}`)
  const count = Math.max(typed.urls.length, saved.urls.length)
  for (let i = 0; i < count; i++) {
    const mine = typed.urls[i]
    const theirs = saved.urls[i]
    if (mine === undefined) out.push(`URL ${i + 1}: not in yours, saved ${quoted(theirs.url)}`)
    else if (theirs === undefined) out.push(`URL ${i + 1}: yours ${quoted(mine.url)}, not saved`)
    else {
      if (mine.url.trim() !== theirs.url) out.push(`URL ${i + 1}: yours ${quoted(mine.url)}, saved ${quoted(theirs.url)}`)
      const headers = headerText(theirs.headers)
      if (mine.headers.trim() !== headers.trim()) out.push(`Headers for URL ${i + 1}: yours ${quoted(mine.headers)}, saved ${quoted(headers)}`)
    }
  }
  if (typed.secret === 'typed') out.push(`Shared secret: yours a new one, saved ${saved.sharedSecret ?? 'not set'}`)
  if (typed.secret === 'removed' && saved.sharedSecret != null) out.push(`Shared secret: yours removed, saved ${saved.sharedSecret}`)
  return out
}
