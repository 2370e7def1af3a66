/**
 * The console with several collector processes on one queue server (durable mode): each
 * process's console shows the messages any of them accepted and every delivery attempt,
 * whichever process made it, through the queue server's bus (state/bus.ts).
 *
 * - The accepting process names each followed delivery (`traceId`, which travels with its job)
 *   and tells the others of every message it accepts (`accepted`).
 * - The process making an attempt reports it (the queue's `TraceSink`) to its own record of that
 *   traceId and to the others (`trace`), which apply it to theirs; so does it with the outcome of
 *   a URL that answers after another URL delivered the message.
 * - A retry by hand goes through the durable queue under the same traceId (`retried`: the
 *   others' records go on too, the attempts continue their numbering).
 *
 * Bounded: each process lists at most `perSecond` (100) accepted messages a second as it accepts
 * them. Past that, a delivery is still named (a traceId marked unfollowed) but listed nowhere
 * unless it fails or waits for a retry: then the process making that attempt lists it in every
 * console (`surfaced`, with its body, so any console can retry it by hand), and from then on it is
 * followed like the others. Its success is only counted: each process tells the others, once a
 * second, how many such successes it had (`thinned`); the consoles show that count
 * (`unlisted`) and chart them. So the bound thins out successes only. A notice stays small: a
 * message whose JSON and body take more than 6,000 bytes (a surfaced one's body, 3,000) is shared
 * as its type, name and user only (its raw JSON, and a retry by hand, in the console of the
 * process that has its body).
 */
import type { UrlResult } from '../../webhooks/index.js'
import type { DeliveryTrace, TracedDelivery, TraceSink } from '../delivery/queue.js'
import { parseExact, stringifyExact } from '../../message/exact-json.js'
import { setBackgroundTimeout } from '#platform'
import type { QueueBus } from '../state/bus.js'
import type { AcceptOptions, ConsoleRecorder, Forward, Origin } from './recorder.js'

interface WireResult {
  url: string
  attempt: number
  status?: number
  error?: string
  pending?: true
  /** The answer's first KB and the duration (`UrlResult`). */
  b?: string
  ms?: number
}

type TraceNotice = { t: string } & (
  | { k: 'attempt'; a: number; u: string[] }
  | { k: 'retry'; a: number; r: WireResult[]; d: number }
  | { k: 'settled'; ok: boolean; r: WireResult[] }
  | { k: 'late'; r: WireResult }
)

interface AcceptedNotice {
  /** Source, message (or its summary), body and traceId when forwarded, else outcome and reason. */
  s: string
  m: Record<string, unknown>
  b?: string
  t?: string
  o?: 'not forwarded' | 'blocked'
  r?: string
  /** An admin request's payload: its origin and name (`AcceptOptions`). */
  g?: Origin
  n?: string
  /** A replay (`AcceptOptions`). */
  p?: 1
}

/**
 * A delivery past the follow bound that failed or waits for a retry: its record (the body, or a
 * summary `m` when too large), the attempt that surfaced it and that attempt's outcome.
 */
interface SurfacedNotice {
  t: string
  s: string
  b?: string
  m?: Record<string, unknown>
  a: number
  u: string[]
  n: TraceNotice
}

export interface SharedConsole {
  /**
   * A traceId for the next forwarded message: past this second's budget, an unfollowed one (listed
   * only if its delivery fails or retries); `always`: followed within the budget or not, for a
   * deletion request's few payloads.
   */
  traceId(always?: boolean): string
  /** Where the delivery queue reports attempts on deliveries with a traceId. */
  traces: TraceSink
  /** Records an accepted message (the ingest's `record`) or an admin payload, and tells the other processes. */
  record(source: string, message: Record<string, unknown>, forward: Forward, admin?: Pick<AcceptOptions, 'origin' | 'name' | 'replay'>): DeliveryTrace
  /** A failed delivery is retried by hand here: tells the others first (resolves once told). */
  retried(traceId: string): Promise<void>
  close(): void
}

const MAX_SHARED_BYTES = 6_000
/** A surfaced delivery's body shares its notice with the attempt's results (their answers: `MAX_ANSWER_BYTES`). */
const MAX_SURFACED_BYTES = 3_000
/** Marks a traceId past the follow bound (a bus id holds none). */
const UNFOLLOWED = '~'
const THINNED_EVERY_MS = 1_000
/** Bytes the answers of one notice's results take at most, as JSON (a PostgreSQL notice holds 7,800). */
const MAX_ANSWER_BYTES = 3_600
const MAX_ERROR_CHARS = 300
/** Traces heard before their message (kept for at most this many traceIds). */
const MAX_WAITING = 1_000

const encoder = new TextEncoder()
const toWire = (r: UrlResult): WireResult => ({
  url: r.url,
  attempt: r.attempt,
  ...(r.status !== undefined && { status: r.status }),
  ...(r.error !== undefined && { error: r.error.message.slice(0, MAX_ERROR_CHARS) }),
  ...(r.pending && { pending: true as const }),
  ...(r.answer !== undefined && { b: r.answer }),
  ...(r.durationMs !== undefined && { ms: r.durationMs }),
})
const fromWire = ({ error, b, ms, ...r }: WireResult): UrlResult => ({
  ...r,
  ...(error !== undefined && { error: new Error(error) as UrlResult['error'] }),
  ...(typeof b === 'string' && { answer: b }),
  ...(typeof ms === 'number' && { durationMs: ms }),
})

/**
 * `results` with their answers cut to share `MAX_ANSWER_BYTES` when they would take more (five
 * URLs answering a KB each, or text that JSON escapes): the notice must fit one bus message.
 */
function fitted(results: WireResult[]): WireResult[] {
  let total = 0
  for (const r of results) if (r.b !== undefined) total += r.b.length * 6
  if (total <= MAX_ANSWER_BYTES) return results
  const sizes = results.map((r) => (r.b === undefined ? 0 : encoder.encode(JSON.stringify(r.b)).length))
  const used = sizes.reduce((a, b) => a + b, 0)
  if (used <= MAX_ANSWER_BYTES) return results
  return results.map((r, i) => (r.b === undefined ? r : { ...r, b: r.b.slice(0, Math.floor((r.b.length * MAX_ANSWER_BYTES) / used)) }))
}

function replay(n: TraceNotice): (trace: DeliveryTrace) => void {
  if (n.k === 'attempt') return (t) => t.attempt(n.a, n.u)
  if (n.k === 'retry') return (t) => t.retry(n.a, n.r.map(fromWire), n.d)
  if (n.k === 'late') return (t) => t.late(fromWire(n.r))
  return (t) => t.settled(n.ok, n.r.map(fromWire))
}

/** What the live view lists of a message too large to share, and why it is not whole. */
function summaryOf(message: Record<string, unknown>, size: number): Record<string, unknown> {
  const { type, event, name, userId, anonymousId, messageId, receivedAt } = message
  return { type, event, name, userId, anonymousId, messageId, receivedAt, note: `${size} bytes: shown in the console of the collector process that holds its body` }
}

const utf8Size = (text: string, limit: number) => (text.length * 3 <= limit ? text.length : encoder.encode(text).length)

/** A forwarded body read back as the message it carries (the webhook payload), integers kept exact. */
function messageOf(body: string): Record<string, unknown> {
  try {
    const { value } = parseExact(body)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // Not JSON (a body is always ours, so this is not expected): listed by its text.
  }
  return { type: 'unknown', body }
}

/** The message as shared: whole, or (too large) what the live view lists. */
function shareable(source: string, message: Record<string, unknown>, forward: Forward & { traceId?: string }): AcceptedNotice {
  const notice: AcceptedNotice = 'body' in forward
    ? { s: source, m: message, ...(forward.body !== undefined && { b: forward.body }), ...(forward.traceId !== undefined && { t: forward.traceId }) }
    : { s: source, m: message, o: forward.outcome, r: forward.reason }
  // Sized once, with the native serialiser (a bigint, which only the lossless parse makes, needs
  // the lossless one). A string of n UTF-16 units is n to 3n UTF-8 bytes: encode only when that
  // range straddles the limit or the size is to be shown.
  let text: string
  try {
    text = JSON.stringify(message)
  } catch {
    text = stringifyExact(message, true)
  }
  const units = text.length + (notice.b === undefined ? 0 : notice.b.length)
  if (units * 3 <= MAX_SHARED_BYTES) return notice
  const size = encoder.encode(text).length + (notice.b === undefined ? 0 : encoder.encode(notice.b).length)
  if (size <= MAX_SHARED_BYTES) return notice
  delete notice.b
  notice.m = summaryOf(message, size)
  return notice
}

/** The trace of a message not listed (yet): its delivery reports to the queue's `TraceSink` instead. */
const IGNORED: DeliveryTrace = { attempt() {}, retry() {}, settled() {}, late() {} }

export function shareConsole(recorder: ConsoleRecorder, bus: QueueBus, options: { perSecond?: number; now?: () => number } = {}): SharedConsole {
  const perSecond = options.perSecond ?? 100
  const notFollowed = `delivered from the queue server; not followed (more than ${perSecond} messages a second here)`
  const now = options.now ?? Date.now
  let second = 0
  let used = 0
  const take = () => {
    const current = Math.floor(now() / 1000)
    if (current !== second) (second = current), (used = 0)
    return used++ < perSecond
  }
  let sequence = 0
  const waiting = new Map<string, Array<(trace: DeliveryTrace) => void>>()

  const apply = (traceId: string, call: (trace: DeliveryTrace) => void) => {
    const trace = recorder.traced(traceId)
    if (trace) return call(trace)
    let calls = waiting.get(traceId)
    if (calls === undefined) {
      waiting.set(traceId, (calls = []))
      if (waiting.size > MAX_WAITING) waiting.delete(waiting.keys().next().value!)
    }
    calls.push(call)
  }
  const known = (traceId: string | undefined) => {
    const calls = traceId === undefined ? undefined : waiting.get(traceId)
    const trace = calls && recorder.traced(traceId!)
    if (!trace) return
    waiting.delete(traceId!)
    for (const call of calls!) call(trace)
  }

  /** Lists a surfaced delivery here (unless it is already) and applies the attempt that surfaced it. */
  const surfaced = (n: SurfacedNotice) => {
    if (recorder.traced(n.t) === undefined) {
      const message = n.b !== undefined ? messageOf(n.b) : n.m ?? {}
      // Accepted here when its traceId is one of this process's.
      const remote = !n.t.startsWith(`${bus.id}${UNFOLLOWED}`)
      recorder.accepted(n.s, message, { body: n.b, traceId: n.t }, { remote })
      known(n.t)
    }
    const trace = recorder.traced(n.t)!
    if (n.a > 0) trace.attempt(n.a, n.u)
    replay(n.n)(trace)
  }
  /** Successes past the bound, counted here and told to the others once a second. */
  let thinned = 0
  let thinnedTimer: ReturnType<typeof setTimeout> | undefined
  const succeeded = () => {
    recorder.unlisted(1)
    thinned++
    thinnedTimer ??= setBackgroundTimeout(() => {
      thinnedTimer = undefined
      const n = thinned
      thinned = 0
      void bus.publish('thinned', { n })
    }, THINNED_EVERY_MS)
  }
  /** A trace past the bound, not listed here: silent unless the delivery fails or retries. */
  const unlistedTrace = (traceId: string, delivery: TracedDelivery | undefined): DeliveryTrace => {
    let attempt = 0
    let urls: string[] = []
    const surface = (n: TraceNotice) => {
      if (delivery === undefined) return
      const { source: s, body } = delivery
      surfaced({ t: traceId, s, b: body, a: attempt, u: urls, n })
      const size = utf8Size(body, MAX_SURFACED_BYTES)
      const kept = size <= MAX_SURFACED_BYTES ? { b: body } : { m: summaryOf(messageOf(body), size) }
      void bus.publish('surfaced', { t: traceId, s, ...kept, a: attempt, u: urls, n } satisfies SurfacedNotice)
    }
    return {
      attempt: (a, u) => ((attempt = a), (urls = [...u])),
      retry: (a, results, d) => surface({ t: traceId, k: 'retry', a, r: fitted(results.map(toWire)), d }),
      settled: (ok, results) => (ok ? succeeded() : surface({ t: traceId, k: 'settled', ok, r: fitted(results.map(toWire)) })),
      late: () => {},
    }
  }

  const stop = bus.subscribe((topic, data) => {
    if (topic === 'accepted') {
      const n = data as AcceptedNotice
      if (typeof n?.s !== 'string' || typeof n.m !== 'object' || n.m === null) return
      const forward: Forward = n.o ? { outcome: n.o, reason: String(n.r) } : { body: n.b, ...(n.t !== undefined && { traceId: n.t }) }
      recorder.accepted(n.s, n.m, forward, { remote: true, ...(n.g !== undefined && { origin: n.g, name: n.n }), ...(n.p === 1 && { replay: true }) })
      known(n.t)
    } else if (topic === 'trace') {
      const n = data as TraceNotice
      if (typeof n?.t === 'string') apply(n.t, replay(n))
    } else if (topic === 'surfaced') {
      const n = data as SurfacedNotice
      if (typeof n?.t === 'string' && typeof n.s === 'string' && typeof n.n?.k === 'string' && Array.isArray(n.u)) surfaced(n)
    } else if (topic === 'thinned') {
      const n = (data as { n?: unknown })?.n
      if (Number.isSafeInteger(n) && (n as number) > 0) recorder.unlisted(n as number)
    } else if (topic === 'retried') {
      const n = data as { t?: unknown }
      if (typeof n?.t === 'string') recorder.reopened(n.t)
    }
  })

  return {
    traceId: (always) => `${bus.id}${take() || always ? '.' : UNFOLLOWED}${++sequence}`,
    traces(traceId, delivery) {
      // Past the bound and not surfaced yet (no record of it here).
      if (traceId.includes(UNFOLLOWED) && recorder.traced(traceId) === undefined) return unlistedTrace(traceId, delivery)
      const tell = (notice: TraceNotice) => {
        apply(traceId, replay(notice))
        bus.publish('trace', notice)
      }
      return {
        attempt: (a, urls) => tell({ t: traceId, k: 'attempt', a, u: [...urls] }),
        retry: (a, results, d) => tell({ t: traceId, k: 'retry', a, r: fitted(results.map(toWire)), d }),
        settled: (ok, results) => tell({ t: traceId, k: 'settled', ok, r: fitted(results.map(toWire)) }),
        late: (result) => tell({ t: traceId, k: 'late', r: fitted([toWire(result)])[0] }),
      }
    },
    record(source, message, forward, admin = {}) {
      // Past the bound: listed only once its delivery fails or retries (`surfaced`).
      if ('body' in forward && forward.traceId?.includes(UNFOLLOWED)) return IGNORED
      // A forwarded message took its share of the budget with its traceId; another one takes it here.
      const shared = 'body' in forward ? forward.traceId !== undefined : take()
      const trace = recorder.accepted(source, message, forward, 'body' in forward && !shared ? { ...admin, note: notFollowed } : admin)
      if (shared) {
        bus.publish('accepted', { ...shareable(source, message, forward), ...(admin.origin && { g: admin.origin, n: admin.name }), ...(admin.replay && { p: 1 }) })
        known('body' in forward ? forward.traceId : undefined)
      }
      return trace
    },
    retried: (traceId) => bus.publish('retried', { t: traceId }, { now: true }),
    close() {
      stop()
      clearTimeout(thinnedTimer)
    },
  }
}
