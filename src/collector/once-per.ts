/**
 * Background failures reported without flooding: each distinct line at most once per `ms`. A
 * queue server that goes away fails in a few alternating ways at once (its connection, the
 * worker, each command); remembering only the last line let two of them take turns, several
 * reports a second for as long as the outage lasted.
 */
export function oncePer(ms: number): (line: string) => boolean {
  const last = new Map<string, number>()
  return (line) => {
    const now = Date.now()
    const at = last.get(line)
    if (at !== undefined && now - at < ms) return false
    // Lines that vary (an id in them) must not pile up: the stale ones go.
    if (last.size >= 64) for (const [key, time] of last) if (now - time >= ms) last.delete(key)
    last.set(line, now)
    return true
  }
}
