/**
 * The schedule `WebhookDestination#deliver()` runs in memory: one attempt (./attempt.ts) after
 * another, with backoff, within the retry window, each going only to the URLs still worth asking,
 * until a URL accepts the message or none can; the delivery's record (its URLs' results, the URLs
 * left, the last error), not the retry loop, decides the outcome. A caller that owns the schedule
 * (a durable queue) uses the destination's `attempt` and `nextRetryDelay` instead.
 */
import { ClientClosedError, type AnalyticsError } from '../errors.js'
import type { Emitter } from '../emitter.js'
import { retry } from '../transport/attempt.js'
import type { StopSignal } from '../transport/stop.js'
import { isRetryableError } from '../transport/retry-policy.js'
import { attemptOnce, type AttemptTarget, type UrlResult } from './attempt.js'
import type { DeliveryResult, WebhookDestinationEvents } from './results.js'
import type { ResolvedDestinationOptions } from './options.js'
import { finalError } from './final-error.js'

/** What the schedule is given of its `WebhookDestination`. */
export interface ScheduleContext {
  readonly options: ResolvedDestinationOptions
  readonly events: Emitter<WebhookDestinationEvents>
  /** Ends the retry waits at `close()`. */
  readonly closing: StopSignal
  /** Aborts the requests on the wire (`cancelRequests`). */
  readonly requests: StopSignal
  /** Whether `close()` was called: nothing is sent, nor retried, after it. */
  closed(): boolean
  /** Each URL with the headers for `body` (`WebhookDestination#targetsFor`). */
  targetsFor(body: string): AttemptTarget[]
}

interface Delivery {
  readonly payload: object
  readonly body: string
  readonly targets: readonly AttemptTarget[]
  results: UrlResult[]
  /** Indexes of the URLs the next attempt goes to. */
  active: number[]
  attempts: number
  deliveredBy: number
  error?: AnalyticsError
}

/** `toBody` gives the exact body to send, or throws the `ValidationError` to resolve with. */
export async function deliverOnSchedule(context: ScheduleContext, payload: object, toBody: () => string, only?: readonly number[]): Promise<DeliveryResult> {
  const { options, events, closing } = context
  const { targets, backoff, retryWindow, now, random } = options
  const unattempted = (error: AnalyticsError): UrlResult[] => targets.map(({ url }) => ({ url, attempt: 0, error }))
  if (context.closed()) {
    const error = new ClientClosedError('deliver')
    return fail(events, payload, 0, unattempted(error), error)
  }
  let body: string
  try {
    body = toBody()
  } catch (error) {
    return fail(events, payload, 0, unattempted(error as AnalyticsError), error as AnalyticsError)
  }
  const delivery: Delivery = {
    payload,
    body,
    targets: context.targetsFor(body),
    results: targets.map(({ url }) => ({ url, attempt: 0 })),
    active: only ? [...only] : targets.map((_, i) => i),
    attempts: 0,
    deliveredBy: -1,
  }
  let stoppedBy: unknown
  const startedAt = now()
  try {
    await retry(
      async (n) => {
        delivery.attempts = n
        await runAttempt(context, delivery, n)
        if (delivery.deliveredBy < 0) throw delivery.error
      },
      {
        // A zero window means no retry at all (not "retries with zero delay").
        retries: retryWindow === 0 ? 0 : Number.POSITIVE_INFINITY,
        backoff,
        windowMs: retryWindow,
        signal: closing,
        now,
        random,
        isRetryable: (error) => !context.closed() && delivery.active.length > 0 && isRetryableError(error),
        onRetry: ({ attempt, delayMs }) =>
          void events.emit('retry', () => ({
            payload,
            attempt,
            delayMs,
            results: delivery.results.map((r) => ({ ...r })),
            error: delivery.error!,
          })),
      },
    )
  } catch (error) {
    stoppedBy = error
  }
  // The delivery record, not what the retry loop returned or threw, is the source of truth: an
  // abort from `close()` can end the loop just as an attempt succeeds.
  const results = delivery.results.map((r) => ({ ...r }))
  if (delivery.deliveredBy >= 0) {
    const { url, status } = results[delivery.deliveredBy]
    events.emit('delivered', () => ({ payload, attempt: delivery.attempts, url, status: status!, results }))
    return { delivered: true, attempts: delivery.attempts, results }
  }
  const { error, active } = delivery
  const ended = { error, active, closing, stoppedBy, retryWindow, elapsed: now() - startedAt }
  return fail(events, payload, delivery.attempts, results, finalError(ended))
}

function fail(events: Emitter<WebhookDestinationEvents>, payload: object, attempts: number, results: UrlResult[], error: AnalyticsError): DeliveryResult {
  events.emit('failed', () => ({ payload, attempts, results, error }))
  return { delivered: false, attempts, results, error }
}

/** One attempt of the in-memory schedule: the shared primitive, recorded on `delivery`. */
async function runAttempt(context: ScheduleContext, delivery: Delivery, n: number): Promise<void> {
  const { options: { fetch, timeout, now, targets }, events } = context
  events.emit('attempt', () => ({ payload: delivery.payload, attempt: n, urls: delivery.active.map((i) => targets[i].url) }))
  const outcome = await attemptOnce({
    targets: delivery.targets,
    body: delivery.body,
    attempt: n,
    urls: delivery.active,
    previous: delivery.results,
    fetch,
    timeout,
    now,
    signal: context.requests,
    onLate: (_, result) => void events.emit('late', () => ({ payload: delivery.payload, ...result })),
  })
  delivery.results = outcome.results
  if (outcome.deliveredBy >= 0) delivery.deliveredBy = outcome.deliveredBy
  else {
    delivery.active = outcome.retry
    delivery.error = outcome.error
  }
}
