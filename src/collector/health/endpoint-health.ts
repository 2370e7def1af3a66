/**
 * Endpoint health: each (source, URL)'s attempts and failures over the last hour, its failures
 * since the last success, its last error and its state (`healthy`, `failing`, `disabled`). A URL
 * whose every attempt failed for `disableAfter` ms is disabled: its destination's attempts no
 * longer send to it (`gate`: the URL's outcome is an `EndpointDisabledError`, final), the
 * collector's `onError` is told once, and it stays so until enabled again (`enable`).
 *
 * Outcomes are gathered here and merged into the store's record of the URL (./record.ts): at once
 * in memory; with a queue server every `flushMs`, in one step per URL there (so two processes'
 * failures add up, and only the process whose merge disabled the URL reports it). The records
 * this process has merged or heard of (the bus) decide what its gate refuses.
 */
import { EndpointDisabledError, isAnalyticsError } from '../../errors.js'
import type { Logger } from '../../logger.js'
import { maskUrl } from '../../secrets.js'
import type { UrlResult } from '../../webhooks/index.js'
import type { UrlGate } from '../../webhooks/destination.js'
import { span } from '../../webhooks/final-error.js'
import { addOutcome, emptyOutcomes, enabled, merge, viewOf, type EndpointView, type HealthRecord, type Outcomes } from './record.js'
import { memoryHealth, type HealthStore } from './store.js'

/** Outcomes that say nothing of the URL: the collector stopped its own requests. */
const NOT_THE_URLS = new Set(['ABORTED', 'CLIENT_CLOSED'])

/** The start of the reason a message not sent to a disabled URL failed with: how a retry finds what it missed. */
export const NOT_SENT = 'Not sent: '

const keyOf = (source: string, url: string) => `${source}\u001f${url}`
const partsOf = (key: string) => key.split('\u001f') as [string, string]

export interface HealthOptions {
  /** ms of nothing but failures after which a URL is disabled; 0: never. */
  disableAfter: number
  /** The clock (ms since the epoch). */
  now: () => number
  /** Where the one report of a URL disabled goes (`onError`), and the store's failures. */
  report: (error: unknown) => void
  log: Logger
}

export class EndpointHealth {
  readonly #options: HealthOptions
  #report: (error: unknown) => void
  #store: HealthStore = memoryHealth()
  /** 0: merged at once (memory); else gathered that long (a queue server). */
  #flushMs = 0
  readonly #known = new Map<string, HealthRecord>()
  #pending = new Map<string, Outcomes>()
  #timer: ReturnType<typeof setTimeout> | undefined
  /** Memory: a merge is due at the end of this turn. */
  #soon = false
  #flushing: Promise<void> = Promise.resolve()
  #unwatch: (() => void) | undefined
  /** `close()` began: a merge that fails from then on is logged, not reported. */
  #closing = false

  constructor(options: HealthOptions) {
    this.#options = options
    this.#report = options.report
  }

  /**
   * Keeps the records in `store` (a queue server's, shared), merging every `flushMs`; reports go
   * to `report` from then on. Before any outcome.
   */
  share(store: HealthStore, flushMs: number, report: (error: unknown) => void): void {
    this.#store = store
    this.#report = report
    this.#flushMs = flushMs
    this.#unwatch = store.watch?.((key, record) => void this.#known.set(key, record))
  }

  /** Loads the records kept (a queue server's: the URLs other processes disabled). Never rejects. */
  async load(): Promise<void> {
    try {
      for (const [key, record] of await this.#store.readAll()) this.#known.set(key, record)
    } catch (error) {
      this.#report(new Error('Could not read the endpoints\' health from the queue server', { cause: error }))
    }
  }

  /** What a destination of `source` asks at each attempt, and tells of each outcome (per URL, made once). */
  gate(source: string): UrlGate {
    return {
      forUrl: (url) => {
        const key = keyOf(source, url)
        return {
          refused: () => {
            const disabledAt = this.#known.get(key)?.disabledAt
            if (disabledAt === undefined) return undefined
            const shown = maskUrl(url)
            const since = new Date(disabledAt).toISOString()
            return new EndpointDisabledError(source, shown, disabledAt, `${NOT_SENT}${shown} is disabled (since ${since}: every attempt to it had failed for ${span(this.#options.disableAfter)}). Enable it in the console or with POST /v1/admin/endpoints/enable.`)
          },
          observe: (result) => this.#observe(key, result),
        }
      },
    }
  }

  #observe(key: string, result: UrlResult): void {
    const { error } = result
    if (result.pending || (error && isAnalyticsError(error) && NOT_THE_URLS.has(error.code))) return
    let outcomes = this.#pending.get(key)
    if (outcomes === undefined) this.#pending.set(key, (outcomes = emptyOutcomes()))
    addOutcome(outcomes, this.#options.now(), error?.message)
    if (this.#flushMs === 0) {
      // Memory: the outcomes of one turn of the event loop merged at once, before the next attempt.
      if (!this.#soon) {
        this.#soon = true
        queueMicrotask(() => void ((this.#soon = false), this.flush()))
      }
    } else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => void this.flush(), this.#flushMs)
      ;(this.#timer as { unref?: () => void }).unref?.()
    }
  }

  /** Merges what was gathered into the store, one URL at a time; resolves once done (never rejects). */
  flush(): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const pending = this.#pending
    this.#pending = new Map()
    if (pending.size > 0) this.#flushing = this.#flushing.then(() => this.#merge(pending))
    return this.#flushing
  }

  async #merge(pending: Map<string, Outcomes>): Promise<void> {
    const { now, disableAfter } = this.#options
    const report = this.#report
    for (const [key, outcomes] of pending) {
      try {
        const { before, after } = await this.#store.update(key, (held) => merge(held, outcomes, now(), disableAfter))
        this.#known.set(key, after)
        if (before?.disabledAt === undefined && after.disabledAt !== undefined) {
          report(this.#disabled(key, after))
          await this.#store.announce?.(key, after)
        }
      } catch (error) {
        // At close, the queue server's connections are being dropped (or it stopped answering, which
        // the requests waiting on it were answered for): logged, as the collector's other parts do.
        if (this.#closing) this.#options.log(`closing: could not keep an endpoint's health in the queue server: ${String(error)}`)
        else report(new Error('Could not keep an endpoint\'s health in the queue server', { cause: error }))
      }
    }
  }

  #disabled(key: string, record: HealthRecord): EndpointDisabledError {
    const [source, url] = partsOf(key)
    const shown = maskUrl(url)
    const since = record.failingSince === undefined ? '' : ` since ${new Date(record.failingSince).toISOString()}`
    const last = record.lastError === undefined ? '' : `; last error: ${record.lastError}`
    this.#options.log(`${source}: ${shown} disabled`)
    return new EndpointDisabledError(source, shown, record.disabledAt!, `Webhook URL ${shown} of source "${source}" is disabled: every attempt to it failed for ${span(this.#options.disableAfter)} (${record.consecutiveFailures} failures${since}${last}). No more attempts are made to it; its messages are kept as failed. Enable it in the console or with POST /v1/admin/endpoints/enable.`)
  }

  /** Each of `endpoints` ([source, url]) with its health now, from the store (every process's). */
  async list(endpoints: ReadonlyArray<readonly [string, string]>): Promise<EndpointView[]> {
    await this.flush()
    const all = await this.#store.readAll()
    const now = this.#options.now()
    return endpoints.map(([source, url]) => {
      const record = all.get(keyOf(source, url))
      if (record) this.#known.set(keyOf(source, url), record)
      return viewOf(source, maskUrl(url), record, now)
    })
  }

  /** Whether `source`'s `url` is disabled, as this process knows. */
  isDisabled(source: string, url: string): boolean {
    return this.#known.get(keyOf(source, url))?.disabledAt !== undefined
  }

  /** Enables `source`'s `url` again (every process hears of it): whether it was disabled. */
  async enable(source: string, url: string): Promise<boolean> {
    await this.flush()
    const key = keyOf(source, url)
    const { before, after } = await this.#store.update(key, enabled)
    this.#known.set(key, after)
    await this.#store.announce?.(key, after)
    if (before?.disabledAt !== undefined) this.#options.log(`${source}: ${maskUrl(url)} enabled again`)
    return before?.disabledAt !== undefined
  }

  /** Merges what is left; stops hearing the other processes. */
  async close(): Promise<void> {
    this.#closing = true
    this.#unwatch?.()
    await this.flush()
  }
}
