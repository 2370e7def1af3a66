/**
 * The Client orchestrates: it builds messages, queues them, decides when to flush, and hands
 * batches to Delivery. Limits, bodies, retries and the runtime probe live in their own modules.
 */
import { AbortedError, AnalyticsError, ClientClosedError, QueueFullError } from '../errors.js'
import { Emitter } from '../emitter.js'
import { KEEPALIVE_BODY_BYTES } from '../limits.js'
import { count, createLogger, type Logger } from '../logger.js'
import type {
  AliasMessage, MessageInputs, MessageType, PageMessage, ScreenMessage,
  JsonObject, SentMessage,
} from '../message/types.js'
import type { AnyEvents, TypedGroupMessage, TypedIdentifyMessage, TypedTrackMessage } from '../message/typed-calls.js'
import { holdProcess, onPageHide, onProcessIdleExit, processExiting, setBackgroundTimeout, type TimerHandle } from '../platform/runtime.js'
import { createQueue } from '../queue/choose.js'
import { parsedMessages, type MessageQueue, type QueueBatch } from '../queue/message-queue.js'
import { buildMessage, type BuiltMessage } from './build-message.js'
import { Delivery, sumOutcomes, type BatchOutcome } from './delivery.js'
import { checkEvent, OrderedGate } from './event-validation.js'
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options.js'
import type { ClientEvents, ClientStats, FlushResult } from './reports.js'

/** What a client does when the process is about to exit (set below; not in the browser build). */
let onIdleExit: ((client: Client) => void) | undefined

/**
 * `Events` (event name → properties type), `Traits` and `GroupTraits` type what `track`,
 * `identify` and `group` accept; `Events` is inferred from option `schema` when one is given.
 * Without either, every call takes any name and properties.
 */
export class Client<Events = AnyEvents, Traits = JsonObject, GroupTraits = JsonObject> {
  readonly #options: ResolvedOptions
  readonly #log: Logger
  readonly #delivery: Delivery
  readonly #events: Emitter<ClientEvents>
  readonly #queue: MessageQueue
  /** Messages waiting for an async `schema` verdict, and those queued after them. */
  readonly #validated = new OrderedGate<BuiltMessage>((built) => this.#accept(built), (built, error) =>
    this.#refuse(error ?? new AbortedError(`close() ran out of time before the schema of event ${JSON.stringify((built.message as SentMessage<'track'>).event)} answered.`, { messages: [built.message] })))
  /** Dropped since the last drop report. */
  #dropped: SentMessage[] = []
  readonly #pending = new Set<Promise<BatchOutcome>>()
  readonly #stats: ClientStats = { queued: 0, inFlight: 0, delivered: 0, failed: 0, dropped: 0, retries: 0 }
  #timer: TimerHandle | undefined
  /** A dispatch of full batches is scheduled (a microtask, so never on the caller's stack). */
  #dispatchScheduled = false
  #lastFlush = Date.now()
  #closing: Promise<FlushResult> | undefined
  readonly #unsubscribe: Array<() => void>

  constructor(writeKey: string, options?: ClientOptions<Events>) {
    this.#options = resolveOptions(writeKey, options)
    this.#log = createLogger('analytics:client', this.#options.debug)
    // A listener that throws is reported on console.error (the emitter does it).
    this.#events = new Emitter<ClientEvents>(['flush', 'retry', 'error'])
    this.#delivery = new Delivery(this.#options, {
      delivered: (batch, status) => {
        this.#stats.delivered += batch.length
        if (this.#log.enabled) this.#log(`delivered ${count(batch.length, 'message')} (${status})`)
        this.#events.emit('flush', () => withMessages(batch, { status }))
      },
      retrying: (batch, attempt, error) => {
        this.#stats.retries++
        this.#events.emit('retry', () => withMessages(batch, { attempt, error }))
      },
      failed: (error) => {
        this.#stats.failed += error.messages.length
        this.#report(error)
      },
    }, this.#log)
    // Messages left by pages that are gone (option `persist`) are queued like new ones, ahead of
    // this page's own (unless closed by then), and sent at once: they may have gone out with
    // keepalive as their page went away, with no answer seen, and a page left before its timer
    // fires would hand them on unsent again, and again.
    this.#queue = createQueue(this.#options, (messages) => {
      if (this.#closing) return false
      const queued = this.#queue.length
      for (const m of messages) this.#accept(m)
      const adopted = this.#queue.length - queued
      // (None taken, all dropped: the page's own timer stays armed.)
      if (adopted) this.#dispatchQueue(false, adopted)
      return true
    })
    this.#unsubscribe = [onPageHide(() => this.#onPageHide())]
    if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__)) this.#unsubscribe.push(onProcessIdleExit(this as unknown as Client, onIdleExit!))
  }

  /**
   * Server runtimes: the process is about to exit with messages held; flush them (this keeps it
   * running until they are settled). Not in the browser build. The hook holds the client weakly,
   * so this is made once, outside the constructor: a closure made in it would hold the client
   * (V8 keeps one context per scope, and the constructor's holds `this`). Made in the class's
   * static block, as it reads the client's private fields; kept outside the class, so the browser
   * build has no trace of it.
   */
  static {
    if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__)) {
      onIdleExit = (client: Client) => {
        if (client.#queue.length === 0 && client.#pending.size === 0 && client.#validated.size === 0) return
        client.#log('process is exiting; flushing first')
        void client.flush()
      }
    }
  }

  identify(message: TypedIdentifyMessage<Traits>): SentMessage<'identify'> {
    return this.#enqueue('identify', message as MessageInputs['identify'])
  }

  track(message: TypedTrackMessage<Events>): SentMessage<'track'> {
    return this.#enqueue('track', message as MessageInputs['track'])
  }

  page(message: PageMessage): SentMessage<'page'> {
    return this.#enqueue('page', message)
  }

  screen(message: ScreenMessage): SentMessage<'screen'> {
    return this.#enqueue('screen', message)
  }

  group(message: TypedGroupMessage<GroupTraits>): SentMessage<'group'> {
    return this.#enqueue('group', message as MessageInputs['group'])
  }

  alias(message: AliasMessage): SentMessage<'alias'> {
    return this.#enqueue('alias', message)
  }

  on<K extends keyof ClientEvents>(event: K, listener: (payload: ClientEvents[K]) => void): this {
    this.#events.on(event, listener)
    return this
  }

  off<K extends keyof ClientEvents>(event: K, listener: (payload: ClientEvents[K]) => void): this {
    this.#events.off(event, listener)
    return this
  }

  stats(): ClientStats {
    // Full batches whose dispatch is scheduled (see #scheduleDispatch) are handed over already.
    const handed = this.#dispatchScheduled ? this.#fullBatches() : 0
    return { ...this.#stats, queued: this.#queue.length - handed, inFlight: this.#stats.inFlight + handed }
  }

  /**
   * Sends everything queued, and resolves once every message queued before this call (including
   * batches in flight or waiting to retry) is delivered or has failed for good. Never rejects.
   * Until it resolves, it keeps the process alive, even while every batch waits out a retry delay.
   */
  flush(): Promise<FlushResult> {
    // Messages waiting for an async schema verdict were queued before this call: wait for them
    // (holding the process meanwhile too).
    if (this.#validated.size) {
      const release = holdProcess()
      return this.#validated.settled().then(() => this.#flushNow()).finally(release)
    }
    return this.#flushNow()
  }

  #flushNow(): Promise<FlushResult> {
    this.#dispatchQueue()
    const pending = [...this.#pending]
    if (!pending.length) return Promise.resolve(sumOutcomes([]))
    const release = holdProcess()
    return Promise.all(pending).then((outcomes) => {
      release()
      return sumOutcomes(outcomes)
    })
  }

  /**
   * Flushes, waits (at most `timeoutMs` when given, then aborts what is left and reports it as
   * failed), and stops the timer and listeners. Later calls throw `ClientClosedError`. Calling it
   * again is safe: without a bound it gives the first call's promise; with one, that bound holds
   * too (a shutdown path's `close(1000)` after an earlier unbounded `close()`).
   */
  close(timeoutMs?: number): Promise<FlushResult> {
    if (!this.#closing) {
      this.#log('closing')
      this.#closing = this.flush()
      this.#clearTimer()
      for (const unsubscribe of this.#unsubscribe) unsubscribe()
    }
    const flushed = this.#closing
    if (timeoutMs === undefined) return flushed
    return (async () => {
      let bound: TimerHandle | undefined
      const expired = new Promise<'expired'>((resolve) => {
        bound = setBackgroundTimeout(() => resolve('expired'), timeoutMs)
      })
      const first = await Promise.race([flushed, expired])
      clearTimeout(bound)
      if (first !== 'expired') return first
      this.#log(`close(${timeoutMs}) ran out of time; aborting what is left`)
      this.#validated.stop()
      this.#delivery.stop()
      return flushed
    })()
  }

  #enqueue<T extends MessageType>(type: T, input: MessageInputs[T]): SentMessage<T> {
    if (this.#closing) throw new ClientClosedError(type)
    const built = buildMessage(type, input, this.#options, this.#queue.takesParts)
    const { schema } = this.#options
    this.#validated.push(built, schema && type === 'track' ? checkEvent(schema, built.message as SentMessage<'track'>, this.#options.timeout) : undefined)
    return built.message as SentMessage<T>
  }

  /**
   * A built message that passed its schema (if any), or one adopted from a page that is gone:
   * queue it, or drop it when the queue is full.
   */
  #accept(built: BuiltMessage): void {
    const held = this.#queue.length + this.#stats.inFlight
    if (held >= this.#options.maxQueueSize) {
      this.#stats.dropped++
      // One report per synchronous burst, carrying every message it dropped.
      if (this.#dropped.push(built.message) === 1) queueMicrotask(() => {
        const messages = this.#dropped
        this.#dropped = []
        this.#report(new QueueFullError(this.#options.maxQueueSize, messages.length, { messages }))
      })
      return
    }
    // The queue keeps the JSON only: the object is the caller's to keep or drop.
    this.#queue.hold(built)
    if (this.#log.enabled) this.#log(`enqueued ${built.message.type} ${built.message.messageId} (${built.bytes} bytes)`)
    if (this.#queue.length >= this.#options.flushAt) this.#scheduleDispatch()
    else if (this.#timer === undefined) this.#armTimer()
  }

  /** A track whose properties failed its event's schema (or whose verdict close() could not wait for): reported, counted as failed, never sent. */
  #refuse(error: AnalyticsError): void {
    this.#stats.failed++
    queueMicrotask(() => this.#report(error))
  }

  /**
   * `flushAt` messages are queued: batches are cut and requests started in a microtask, after the
   * caller's synchronous code, so none of that work lands inside a loop of calls. Only full
   * batches go; the rest waits for the timer, as it would have had each batch left at its
   * `flushAt`-th call.
   */
  #scheduleDispatch(): void {
    if (this.#dispatchScheduled) return
    this.#dispatchScheduled = true
    queueMicrotask(() => {
      this.#dispatchScheduled = false
      const full = this.#fullBatches()
      if (full) this.#dispatchQueue(false, full)
    })
  }

  /** How many queued messages fill whole batches of `flushAt`. */
  #fullBatches(): number {
    return this.#queue.length - (this.#queue.length % this.#options.flushAt)
  }

  /** Moves the first `take` queued messages (default: all) into batches handed to delivery. */
  #dispatchQueue(pageHide = false, take = this.#queue.length): void {
    this.#clearTimer()
    this.#lastFlush = Date.now()
    if (!take) return
    // On page hide, no request may exceed the keepalive budget, or none of it could go keepalive.
    const batches = this.#queue.take(take, this.#options.flushAt, pageHide ? KEEPALIVE_BODY_BYTES : undefined)
    if (this.#queue.length) this.#armTimer()
    if (this.#log.enabled) this.#log(`flushing ${count(take, 'message')} in ${count(batches.length, 'batch', 'batches')}`)
    for (const batch of batches) {
      this.#stats.inFlight += batch.length
      // On page hide, at once, with keepalive within the page's budget (shared by its clients).
      // Settled: every message delivered or failed for good (and reported), and released.
      const sending = this.#delivery.send(batch, pageHide).then((outcome) => {
        this.#stats.inFlight -= batch.length
        this.#pending.delete(sending)
        return outcome
      })
      this.#pending.add(sending)
    }
  }

  #armTimer(): void {
    // Queued while the process exits on its own (by an app's `beforeExit` listener that ran after
    // the exit flush): sent now, holding the process; an unref'd timer would let it end first.
    if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__) && processExiting()) return void this.flush()
    const wait = this.#lastFlush + this.#options.flushAfter - Date.now()
    this.#timer = setBackgroundTimeout(() => {
      this.#timer = undefined
      this.#dispatchQueue()
    }, wait)
  }

  #clearTimer(): void {
    // (None is fine: clearTimeout(undefined) does nothing.)
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /**
   * The page is hidden or unloading: store what is held (persist), and send at once, with
   * `keepalive` within the page's budget, what is queued and then the batches waiting to retry or
   * for a connection slot.
   */
  #onPageHide(): void {
    this.#queue.hide()
    this.#delivery.hide()
    if (!this.#queue.length) return
    this.#log('page hidden; sending with keepalive')
    this.#dispatchQueue(true)
  }

  #report(error: AnalyticsError): void {
    const messages = count(error.messages.length, 'message')
    this.#log(`failed: ${error.message} (${messages})`)
    if (!this.#events.emit('error', () => error)) console.error(`isomorphic-analytics: ${messages} not delivered: ${error.message}`)
  }
}

/**
 * `payload` with a `messages` property parsed from `batch` on first read, for the `'flush'` and
 * `'retry'` events: a listener that only counts or logs never pays for the parse. The texts are
 * read at once: a batch held as bytes frees them once it settles, and a listener may read
 * `messages` later.
 */
function withMessages<T extends object>(batch: QueueBatch, payload: T): T & { messages: SentMessage[] } {
  const texts = batch.texts()
  let parsed: SentMessage[] | undefined
  return { ...payload, get messages() { return (parsed ??= parsedMessages(texts)) } }
}
