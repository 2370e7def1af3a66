/**
 * One webhook URL's health, as kept (in memory, or as JSON in the queue server) and as changed:
 * attempts and failures per minute over the last hour, the failures since the last success, when
 * they started, the last error, and when the URL was disabled. Pure functions of the record, a
 * batch of outcomes (`Outcomes`) and the time: every process on a queue server merges its own
 * batches into the shared record with them.
 */

/** Minutes kept: the last hour. */
const WINDOW_MINUTES = 60
const MINUTE = 60_000

export interface HealthRecord {
  /** `[minute since the epoch, attempts, failures]`, oldest first, the last hour only. */
  minutes: Array<[number, number, number]>
  /** Failures since the last success (or since it was enabled again). */
  consecutiveFailures: number
  /** When the first of those failures happened (ms since the epoch); absent when there are none. */
  failingSince?: number
  /** The last failure's error message, and when it happened. */
  lastError?: string
  lastErrorAt?: number
  /** When it was disabled (ms since the epoch); absent while it is not. */
  disabledAt?: number
}

/** Outcomes seen by one process since it last merged them. */
export interface Outcomes {
  minutes: Map<number, [attempts: number, failures: number]>
  /** A success was among them: the record's streak of failures ends there. */
  succeeded: boolean
  /** Failures after the last success among them (all of them when none succeeded). */
  failures: number
  /** When the first of those failures happened. */
  firstFailureAt?: number
  lastError?: string
  lastErrorAt?: number
}

export const emptyOutcomes = (): Outcomes => ({ minutes: new Map(), succeeded: false, failures: 0 })

export const emptyRecord = (): HealthRecord => ({ minutes: [], consecutiveFailures: 0 })

/** Adds one outcome at `at` (ms): `error` is the failure's message, `undefined` for a success. */
export function addOutcome(outcomes: Outcomes, at: number, error: string | undefined): void {
  const minute = Math.floor(at / MINUTE)
  const counts = outcomes.minutes.get(minute) ?? [0, 0]
  counts[0]++
  if (error === undefined) {
    outcomes.succeeded = true
    outcomes.failures = 0
    outcomes.firstFailureAt = undefined
  } else {
    counts[1]++
    outcomes.failures++
    outcomes.firstFailureAt ??= at
    outcomes.lastError = error
    outcomes.lastErrorAt = at
  }
  outcomes.minutes.set(minute, counts)
}

/** The minutes of the hour ending at `now`, oldest first. */
function recentMinutes(minutes: Iterable<[number, number, number]>, now: number): Array<[number, number, number]> {
  const from = Math.floor(now / MINUTE) - WINDOW_MINUTES + 1
  return [...minutes].filter(([minute]) => minute >= from).sort((a, b) => a[0] - b[0])
}

/**
 * `record` with `outcomes` merged in, at `now`; disabled once its failures have lasted
 * `disableAfter` ms (0: never) by its latest one.
 */
export function merge(record: HealthRecord | undefined, outcomes: Outcomes, now: number, disableAfter: number): HealthRecord {
  const held = record ?? emptyRecord()
  const minutes = new Map(held.minutes.map(([m, a, f]) => [m, [m, a, f] as [number, number, number]]))
  for (const [minute, [a, f]] of outcomes.minutes) {
    const counts = minutes.get(minute) ?? [minute, 0, 0]
    minutes.set(minute, [minute, counts[1] + a, counts[2] + f])
  }
  const consecutiveFailures = outcomes.succeeded ? outcomes.failures : held.consecutiveFailures + outcomes.failures
  // Processes merge what they saw every few seconds, in any order: a streak starts at the earliest
  // failure merged into it and lasts until the latest, whichever merge came first.
  const failingSince = outcomes.succeeded ? outcomes.firstFailureAt : earliest(held.failingSince, outcomes.firstFailureAt)
  const newer = outcomes.lastErrorAt !== undefined && (held.lastErrorAt === undefined || outcomes.lastErrorAt >= held.lastErrorAt)
  const lastError = newer ? outcomes.lastError : held.lastError
  const lastErrorAt = newer ? outcomes.lastErrorAt : held.lastErrorAt
  const next: HealthRecord = {
    minutes: recentMinutes(minutes.values(), now),
    consecutiveFailures,
    ...(failingSince !== undefined && { failingSince }),
    ...(lastError !== undefined && { lastError }),
    ...(lastErrorAt !== undefined && { lastErrorAt }),
    ...(held.disabledAt !== undefined && { disabledAt: held.disabledAt }),
  }
  const lasted = failingSince !== undefined && outcomes.lastErrorAt !== undefined && lastErrorAt !== undefined ? lastErrorAt - failingSince : -1
  if (next.disabledAt === undefined && disableAfter > 0 && consecutiveFailures > 0 && lasted >= disableAfter) next.disabledAt = now
  return next
}

const earliest = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b))

/** `record` enabled again: not disabled, and its failures so far forgotten (its counts stay). */
export function enabled(record: HealthRecord | undefined): HealthRecord {
  const { disabledAt: _disabled, failingSince: _since, ...rest } = record ?? emptyRecord()
  return { ...rest, consecutiveFailures: 0 }
}

/** A webhook URL's state: `failing` when its last attempt failed, `disabled` after `disableAfter` of nothing but failures. */
export type HealthState = 'healthy' | 'failing' | 'disabled'

/** What `GET /v1/admin/endpoints` lists of one URL. */
export interface EndpointView {
  source: string
  url: string
  state: HealthState
  attempts1h: number
  failures1h: number
  consecutiveFailures: number
  lastError: string | null
  /** ISO 8601, or `null`. */
  disabledAt: string | null
}

export function viewOf(source: string, url: string, record: HealthRecord | undefined, now: number): EndpointView {
  const held = record ?? emptyRecord()
  let attempts1h = 0
  let failures1h = 0
  for (const [, a, f] of recentMinutes(held.minutes, now)) {
    attempts1h += a
    failures1h += f
  }
  const state: HealthState = held.disabledAt !== undefined ? 'disabled' : held.consecutiveFailures > 0 ? 'failing' : 'healthy'
  return {
    source,
    url,
    state,
    attempts1h,
    failures1h,
    consecutiveFailures: held.consecutiveFailures,
    lastError: held.lastError ?? null,
    disabledAt: held.disabledAt === undefined ? null : new Date(held.disabledAt).toISOString(),
  }
}
