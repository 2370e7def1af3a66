/**
 * Live counts of the collector: on a terminal, one line rewritten in place; otherwise (a pipe, a
 * log file) a plain line every `intervalMs` when something changed.
 */
import type { CollectorStats } from '../collector/index.js'

/**
 * `shared`: the collector delivers through a queue server, where `pending` and `retrying` count
 * every process's deliveries while the other counts are this process's; the line says so.
 */
export function formatProgress(stats: CollectorStats, shared = false): string {
  const last = stats.lastReceivedAt === undefined ? '' : ` · last received at ${stats.lastReceivedAt}`
  const blocked = stats.blocked > 0 ? ` · blocked by tracking plans ${stats.blocked}` : ''
  if (shared) {
    return `this process: received ${stats.received} · forwarded ${stats.forwarded} · failed ${stats.failed} · ` +
      `rejected requests ${stats.rejected}${last}${blocked} | all processes: pending ${stats.pending} · retrying ${stats.retrying}`
  }
  return `received ${stats.received} · forwarded ${stats.forwarded} · retrying ${stats.retrying} · ` +
    `failed ${stats.failed} · pending ${stats.pending} · rejected requests ${stats.rejected}${last}${blocked}`
}

export interface ProgressOptions {
  write: (text: string) => void
  /** Rewrite one line in place (a terminal without other log output). */
  inPlace: boolean
  intervalMs: number
  stats: () => CollectorStats
  /** See formatProgress. */
  shared?: boolean
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
    const line = formatProgress(stats(), options.shared)
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
