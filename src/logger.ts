/**
 * Runtime logging with the conventions of the `debug` package: a comma- or space-separated list
 * of names, `*` as a wildcard, `-name` to exclude. Our only name is `analytics`.
 *
 * We do not depend on `debug` itself: its browser build costs ~3 KB gzipped of a 10 KB budget,
 * and the part we need (matching one name, writing one line) is this file.
 */

export const LOG_NAMESPACE = 'analytics'

export interface Logger {
  readonly enabled: boolean
  (message: string, ...details: unknown[]): void
}

/** Does a `DEBUG` setting enable `namespace`? Exclusions win over inclusions, as in `debug`. */
export function debugEnables(setting: string | undefined, namespace: string): boolean {
  if (!setting) return false
  let enabled = false
  for (const raw of setting.split(/[\s,]+/)) {
    if (!raw) continue
    const exclude = raw.startsWith('-')
    const pattern = exclude ? raw.slice(1) : raw
    if (!wildcardMatch(pattern, namespace)) continue
    if (exclude) return false
    enabled = true
  }
  return enabled
}

function wildcardMatch(pattern: string, name: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*?')
  return new RegExp(`^${source}$`).test(name)
}

const noop = Object.assign(() => {}, { enabled: false }) as Logger

/** A logger that writes `analytics <message>` lines to the console's error stream when enabled. */
export function createLogger(enabled: boolean, sink: (line: string) => void = defaultSink): Logger {
  if (!enabled) return noop
  let last = 0
  const log = (message: string, ...details: unknown[]) => {
    const now = Date.now()
    const delta = last === 0 ? 0 : now - last
    last = now
    const extra = details.length > 0 ? ' ' + details.map(formatDetail).join(' ') : ''
    sink(`${LOG_NAMESPACE} ${message}${extra} +${delta}ms`)
  }
  return Object.assign(log, { enabled: true }) as Logger
}

function formatDetail(value: unknown): string {
  if (typeof value === 'string') return value
  if (value instanceof Error) return `${value.name}: ${value.message}`
  try {
    return JSON.stringify(value)
  } catch {
    return String(value)
  }
}

const defaultSink = (line: string) => console.error(line)
