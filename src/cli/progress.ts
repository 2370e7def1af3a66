/**
 * Live counts of the collector: on a terminal, one line rewritten in place; otherwise (a pipe, a
 * log file) a plain line every `intervalMs` when something changed.
 */
import type { CollectorStats } from '../collector/index.js'

export function formatProgress(stats: CollectorStats): string {
  return (
    `received ${stats.received} · forwarded ${stats.forwarded} · retrying ${stats.retrying} · ` +
    `failed ${stats.failed} · pending ${stats.pending} · rejected requests ${stats.rejected}` +
    (stats.lastReceivedAt === undefined ? '' : ` · last received at ${stats.lastReceivedAt}`) +
    (stats.blocked > 0 ? ` · blocked by tracking plans ${stats.blocked}` : '')
  )
}

export interface ProgressOptions {
  write: (text: string) => void
  /** Rewrite one line in place (a terminal without other log output). */
  inPlace: boolean
  intervalMs: number
  stats: () => CollectorStats
  now?: () => Date
}

export interface Progress {
  /** Clears the live line (so other output starts on a clean line). */
  stop(): void
}

const TTY_REFRESH_MS = 250

export function startProgress(options: ProgressOptions): Progress {
  const { write, inPlace, stats } = options
  const now = options.now ?? (() => new Date())
  let last = ''
  const tick = () => {
    const line = formatProgress(stats())
    if (line === last) return
    last = line
    if (inPlace) write(`\r\x1b[2K${line}`)
    else write(`${now().toISOString()} ${line}\n`)
  }
  const timer = setInterval(tick, inPlace ? TTY_REFRESH_MS : options.intervalMs)
  timer.unref()
  if (inPlace) tick()
  return {
    stop() {
      clearInterval(timer)
      if (inPlace && last !== '') write('\r\x1b[2K')
    },
  }
}
