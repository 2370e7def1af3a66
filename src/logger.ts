/**
 * Runtime logging with the conventions of the `debug` package: a comma- or space-separated list
 * of names, `*` as a wildcard, `-name` to exclude. Each part logs under its own namespace
 * (`analytics:client`, `analytics:collector`, `analytics:webhooks`, `analytics:cli`); the bare
 * parent name `analytics` stands for all of them, as `analytics:*` does.
 *
 * We do not depend on `debug` itself: its browser build costs ~3 KB gzipped of a 12 KB budget,
 * and the part we need (matching one name, writing one line) is this file.
 */

import { formatDetail, logSink } from '#platform'

export type LogNamespace = 'analytics:client' | 'analytics:collector' | 'analytics:webhooks' | 'analytics:cli'

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
    // A parent name without a wildcard (`analytics`) also names its children (`analytics:client`).
    if (!wildcardMatch(pattern, namespace) && !(!pattern.includes('*') && namespace.startsWith(`${pattern}:`))) continue
    if (exclude) return false
    enabled = true
  }
  return enabled
}

function wildcardMatch(pattern: string, name: string): boolean {
  // `*` is not among the escaped characters: it is then made the wildcard.
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*?')
  return new RegExp(`^${source}$`).test(name)
}

const noop = Object.assign(() => {}, { enabled: false }) as Logger

/** `1 message`, `2 messages`: a count in words that agree with it. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`
}

/**
 * A logger that writes `<namespace> <message> +<ms>ms` lines when enabled: to the console's error
 * stream on servers (as `debug` does), at debug level (`console.debug`) in browsers and workers.
 */
export function createLogger(namespace: LogNamespace, enabled: boolean, sink: (line: string) => void = logSink): Logger {
  if (!enabled) return noop
  let last = 0
  const log = (message: string, ...details: unknown[]) => {
    const now = Date.now()
    const delta = last === 0 ? 0 : now - last
    last = now
    // (The client passes none: the browser build has no `formatDetail`.)
    const extra = formatDetail && details.length > 0 ? ' ' + details.map(formatDetail).join(' ') : ''
    sink(`${namespace} ${message}${extra} +${delta}ms`)
  }
  return Object.assign(log, { enabled: true }) as Logger
}


