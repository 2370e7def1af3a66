/**
 * The Client orchestrates: it builds messages, queues them, decides when to flush, and hands
 * batches to Delivery. Limits, bodies, retries and the runtime probe live in their own modules.
 */
import { AbortedError, AnalyticsError, ClientClosedError, ConfigError, QueueFullError, messageOf } from '../errors.js'
import { Emitter } from '../emitter.js'
import { KEEPALIVE_BODY_BYTES } from '../limits.js'
import { count, createLogger, type Logger } from '../logger.js'
import type {
  AliasMessage, MessageInputs, MessageType, PageMessage, ScreenMessage,
  JsonObject, SentMessage,
} from '../message/types.js'
import type { AnyEvents, TypedGroupMessage, TypedIdentifyMessage, TypedTrackMessage } from '../message/typed-calls.js'
import { createQueue, holdProcess, onPageHide, processHooks, setBackgroundTimeout, utf8ByteLength } from '#platform'
import type { TimerHandle } from '../platform/platform.js'
import type { Spill } from '../platform/spill.js'
import { parsedMessages, type BuiltMessage, type MessageQueue, type QueueBatch } from '../queue/message-queue.js'
import { buildMessage } from './build-message.js'
import { Delivery, sumOutcomes, type BatchOutcome } from './delivery.js'
import { checkEvent, OrderedGate } from './event-validation.js'
import { Identity } from './identity.js'
import { resolveOptions, type ClientOptions, type ResolvedOptions } from './options.js'
import { withBrowserContext } from './page-context.js'
import type { ClientEvents, ClientStats, FlushResult } from './reports.js'
import { isPlainObject } from '../message/validate.js'

/** What a client does when the process is about to exit (set below, where the platform has process hooks). */
let onIdleExit: ((client: Client) => void) | undefined
/** What a client does as the process exits (set below, where the platform has process hooks). */
let onExit: ((client: Client) => void) | undefined
/** Opens a client's spill directory (option `spill`; set below, where the platform has process hooks). */
let openSpillOf: ((client: Client, dir: string) => void) | undefined

/**
 * The analytics client: each call (`identify`, `track`, `page`, `screen`, `group`, `alias`)
 * validates its message and queues it; batches are sent when `flushAt` messages are queued, every
 * `flushAfter` ms, on {@link Client.flush} and on {@link Client.close}, and retried with backoff.
 * Every accepted message is either delivered (the `'flush'` event) or reported (the `'error'`
 * event); delivery failures are never thrown into your code. Runs on Node, Bun, Deno, browsers,
 * workers and edge runtimes.
 *
 * `Events` (event name → properties type), `Traits` and `GroupTraits` type what `track`,
 * `identify` and `group` accept; `Events` is inferred from option `schema` when one is given.
 * Without either, every call takes any name and properties.
 *
 * @example
 * ```ts
 * import { Client } from 'isomorphic-analytics'
 *
 * const client = new Client(process.env.WRITE_KEY!, { endpoint: 'https://collector.example.com' })
 * client.on('error', (error) => console.error(error.message, error.messages))
 * client.identify({ userId: 'user-1', traits: { plan: 'pro' } })
 * client.track({ userId: 'user-1', event: 'Order Completed', properties: { total: 42.5 } })
 * await client.close() // flushes, then resolves with { delivered, failed }
 * ```
 */
export class Client<Events = AnyEvents, Traits = JsonObject, GroupTraits = JsonObject> {
  readonly #options: ResolvedOptions
  readonly #log: Logger
  readonly #delivery: Delivery
  readonly #events: Emitter<ClientEvents>
  readonly #queue: MessageQueue
  /** Option `identity`: the ids kept for calls that name no user (undefined: off). */
  readonly #identity: Identity | undefined
  /** With option `schema`: messages waiting for an async verdict, and those queued after them. */
  readonly #validated: OrderedGate<BuiltMessage> | undefined
  /** Dropped since the last drop report. */
  #dropped: SentMessage[] = []
  /** Each batch handed to delivery and not settled yet: its delivery, and its messages (for the spill at exit). */
  readonly #pending = new Map<Promise<BatchOutcome>, QueueBatch>()
  /** Where messages held at exit go (option `spill`), once its directory is open. */
  #spill: Spill | undefined
  readonly #stats: ClientStats = { queued: 0, inFlight: 0, delivered: 0, failed: 0, dropped: 0, retries: 0 }
  #timer: TimerHandle | undefined
  /** A dispatch of full batches is scheduled (a microtask, so never on the caller's stack). */
  #dispatchScheduled = false
  #lastFlush = Date.now()
  #closing: Promise<FlushResult> | undefined
  readonly #unsubscribe: Array<() => void>

  /**
   * @param writeKey - The source's write key, a non-empty string: sent with every batch (as Basic
   *   auth, or in the body with `plainText`), never logged in full.
   * @param options - See {@link ClientOptions}; every option has a default.
   * @throws {@link ConfigError} for an empty or non-string `writeKey`, an unknown option or an
   *   invalid value; the message names the option, what it expects and what it got.
   */
  constructor(writeKey: string, options?: ClientOptions<Events>) {
    this.#options = resolveOptions(writeKey, options)
    this.#log = createLogger('analytics:client', this.#options.debug)
    // (Where there is no page, this touches no storage: constructing never throws for it.)
    this.#identity = this.#options.identity && new Identity(this.#options.identity)
    this.#validated = this.#options.schema && new OrderedGate<BuiltMessage>((built) => this.#accept(built), (built, error) =>
      this.#refuse(error ?? new AbortedError(`close() ran out of time before the schema of event ${JSON.stringify((built.message as SentMessage<'track'>).event)} answered.`, { messages: [built.message] })))
    // A listener that throws is reported on console.error (the emitter does it).
    this.#events = new Emitter<ClientEvents>(['flush', 'retry', 'error'])
    this.#delivery = new Delivery(this.#options, {
      // Out of flight as each part of a batch settles (a 413's halves settle apart).
      delivered: (batch, status) => {
        this.#stats.delivered += batch.length
        this.#stats.inFlight -= batch.length
        if (this.#log.enabled) this.#log(`delivered ${count(batch.length, 'message')} (${status})`)
        this.#events.emit('flush', () => withMessages(batch, { status }))
      },
      retrying: (batch, attempt, error) => {
        this.#stats.retries++
        this.#events.emit('retry', () => withMessages(batch, { attempt, error }))
      },
      failed: (error) => {
        this.#stats.failed += error.messages.length
        this.#stats.inFlight -= error.messages.length
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
    if (processHooks) {
      this.#unsubscribe.push(processHooks.onIdleExit(this as unknown as Client, onIdleExit!))
      // (Kept after close(): what its flush still holds at an exit is spilled too.)
      processHooks.onExit(this as unknown as Client, onExit!)
      if (this.#options.spillDir !== undefined) openSpillOf!(this as unknown as Client, this.#options.spillDir)
    }
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
    if (processHooks) {
      const hooks = processHooks
      onIdleExit = (client: Client) => {
        if (client.#queue.length === 0 && client.#pending.size === 0 && !client.#validated?.size) return
        client.#log('process is exiting; flushing first')
        void client.flush()
      }
      /**
       * Option `spill`: opens its directory, then (in a microtask, once the caller has added its
       * listeners) queues what earlier processes spilled there for this write key and sends it at
       * once. A directory that cannot be opened is reported; messages held at exit are then
       * reported as lost.
       */
      openSpillOf = (client: Client, dir: string) => {
        try {
          client.#spill = hooks.openSpill(dir, client.#options.writeKey)
        } catch (error) {
          queueMicrotask(() => client.#report(new ConfigError('spill', `Cannot use the spill directory ${dir}: ${messageOf(error)}. Messages still held when the process exits will be lost (and reported).`)))
          return
        }
        queueMicrotask(() => {
          // Closed at once: the files are left for the next client.
          if (client.#closing) return
          let texts: string[]
          try {
            texts = client.#spill!.recover()
          } catch (error) {
            return client.#report(new ConfigError('spill', `Cannot read the spill directory ${dir}: ${messageOf(error)}.`))
          }
          if (!texts.length) return
          client.#log(`sending ${count(texts.length, 'message')} spilled by an earlier process`)
          for (const json of texts) client.#accept({ message: JSON.parse(json) as SentMessage, json, bytes: utf8ByteLength(json) })
          client.#dispatchQueue()
        })
      }
      /** The texts of every message a client holds, queued or in flight. */
      const heldTexts = (client: Client): string[] => {
        const texts = client.#queue.texts()
        for (const batch of client.#pending.values()) texts.push(...batch.texts())
        return texts
      }
      // The process is exiting (`process.exit()`, a host's signal handler, or its work is done):
      // nothing asynchronous runs from here. What is still held is spilled, or reported lost.
      onExit = (client: Client) => {
        const texts = heldTexts(client)
        if (!texts.length) return
        const spill = client.#spill
        let reason = 'set option `spill` to keep them for the next process'
        if (spill) {
          try {
            spill.write(texts)
            client.#log(`process exiting: ${count(texts.length, 'message')} spilled to ${spill.dir}`)
            return
          } catch (error) {
            reason = `spilling them to ${spill.dir} failed: ${messageOf(error)}`
          }
        } else if (client.#options.spillDir !== undefined) reason = `the spill directory ${client.#options.spillDir} could not be used`
        client.#report(new AbortedError(`The process exited with ${count(texts.length, 'message')} not delivered (${reason}).`, {
          messages: texts.map((json) => JSON.parse(json) as SentMessage),
        }))
      }
    }
  }

  /**
   * Queues an identify: who the user is, with their `traits`. Needs a `userId` or an `anonymousId`.
   * Returns the message as it will be sent (with `type`, `messageId`, `timestamp` and the merged
   * `context`); never mutates its argument.
   *
   * @throws {@link ValidationError} for a missing or mistyped field, {@link MessageTooLargeError} over
   *   32,000 bytes as JSON, {@link ClientClosedError} after `close()`. Nothing is queued then.
   */
  identify(message: TypedIdentifyMessage<Traits>): SentMessage<'identify'> {
    return this.#enqueue('identify', message as MessageInputs['identify'])
  }

  /**
   * Queues a track: the user did `event`, with its `properties`. Needs `event` and a `userId` or an
   * `anonymousId`. With option `schema`, the properties are checked against the event's schema
   * after the call: a failure is reported through `'error'` and the message is not sent. Returns
   * the message as it will be sent.
   *
   * @throws {@link ValidationError}, {@link MessageTooLargeError} or {@link ClientClosedError}, as
   *   {@link Client.identify} does.
   */
  track(message: TypedTrackMessage<Events>): SentMessage<'track'> {
    return this.#enqueue('track', message as MessageInputs['track'])
  }

  /**
   * Queues a page view, with optional `name`, `category` and `properties`. Needs a `userId` or an
   * `anonymousId` (option `identity` fills them in; in a page, `page()` alone is enough).
   * Returns the message as it will be sent.
   *
   * @throws {@link ValidationError}, {@link MessageTooLargeError} or {@link ClientClosedError}, as
   *   {@link Client.identify} does.
   */
  page(message: PageMessage = {}): SentMessage<'page'> {
    return this.#enqueue('page', message)
  }

  /**
   * Queues a mobile screen view, with optional `name`, `category` and `properties`. Needs a
   * `userId` or an `anonymousId`. Returns the message as it will be sent.
   *
   * @throws {@link ValidationError}, {@link MessageTooLargeError} or {@link ClientClosedError}, as
   *   {@link Client.identify} does.
   */
  screen(message: ScreenMessage): SentMessage<'screen'> {
    return this.#enqueue('screen', message)
  }

  /**
   * Queues a group: the user belongs to `groupId` (an account, a company), with the group's
   * `traits`. Needs `groupId` and a `userId` or an `anonymousId`. Returns the message as it will
   * be sent.
   *
   * @throws {@link ValidationError}, {@link MessageTooLargeError} or {@link ClientClosedError}, as
   *   {@link Client.identify} does.
   */
  group(message: TypedGroupMessage<GroupTraits>): SentMessage<'group'> {
    return this.#enqueue('group', message as MessageInputs['group'])
  }

  /**
   * Queues an alias: `previousId` (an earlier id, often an anonymous one) and `userId` are the same
   * user. Needs both. Returns the message as it will be sent.
   *
   * @throws {@link ValidationError}, {@link MessageTooLargeError} or {@link ClientClosedError}, as
   *   {@link Client.identify} does.
   */
  alias(message: AliasMessage): SentMessage<'alias'> {
    return this.#enqueue('alias', message)
  }

  /**
   * Option `identity`: forgets the kept `userId` and `anonymousId` (the user signed out); the next
   * call gets a new anonymous id. Another tab of the same site sees it too (its storage is shared).
   * Does nothing where `identity` is off.
   */
  reset(): void {
    this.#identity?.reset()
  }

  /**
   * Adds a listener for `'flush'` (a batch was delivered), `'retry'` (an attempt failed and will be
   * retried) or `'error'` (messages failed for good or were dropped; see {@link ClientEvents}).
   * Without an `'error'` listener, failures are logged with `console.error`. A listener that throws
   * is logged too, and delivery goes on. Returns the client, for chaining.
   *
   * @throws {@link ConfigError} for another event name or a listener that is not a function.
   */
  on<K extends keyof ClientEvents>(event: K, listener: (payload: ClientEvents[K]) => void): this {
    this.#events.on(event, listener)
    return this
  }

  /**
   * Removes a listener added with {@link Client.on}. Returns the client, for chaining.
   *
   * @throws {@link ConfigError} for an unknown event name or a listener that is not a function.
   */
  off<K extends keyof ClientEvents>(event: K, listener: (payload: ClientEvents[K]) => void): this {
    this.#events.off(event, listener)
    return this
  }

  /** The client's counters now: messages queued, in flight, delivered, failed, dropped, and retries. */
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
    const gate = this.#validated
    if (gate?.size) {
      const release = holdProcess()
      return gate.settled().then(() => this.#flushNow()).finally(release)
    }
    return this.#flushNow()
  }

  #flushNow(): Promise<FlushResult> {
    this.#dispatchQueue()
    if (!this.#pending.size) return Promise.resolve(sumOutcomes([]))
    const release = holdProcess()
    // (The batches pending now: later ones are not waited for.)
    return Promise.all(this.#pending.keys()).then((outcomes) => {
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
      this.#validated?.stop()
      this.#delivery.stop()
      return flushed
    })()
  }

  #enqueue<T extends MessageType>(type: T, input: MessageInputs[T]): SentMessage<T> {
    if (this.#closing) throw new ClientClosedError(type)
    const identity = this.#identity
    // Option `identity`: the kept ids where the call names none (an alias names both of its own;
    // what is not an object is left for validation to name).
    if (identity && type !== 'alias' && isPlainObject(input)) input = identity.fill(input) as unknown as MessageInputs[T]
    const parts = this.#options.browserContext
    const defaults = parts ? withBrowserContext(this.#options, parts, type === 'page') : this.#options
    const built = buildMessage(type, input, defaults, identity?.elsewhere ? undefined : this.#queue.keepParts)
    if (identity) {
      // A server rendering a page's code: the browser makes this call again, and sends it.
      if (identity.elsewhere) {
        this.#log(`${type} not sent: option \`identity\` needs a page, and there is none here (a server rendering a page's code?)`)
        return built.message as SentMessage<T>
      }
      if (type === 'identify') identity.remember(built.message.userId)
    }
    // With a schema, the gate keeps the call order behind a verdict not yet known.
    const gate = this.#validated
    if (gate) gate.push(built, type === 'track' ? checkEvent(this.#options.schema!, built.message as SentMessage<'track'>, this.#options.timeout) : undefined)
    else this.#accept(built)
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
        this.#pending.delete(sending)
        return outcome
      })
      this.#pending.set(sending, batch)
    }
  }

  #armTimer(): void {
    // Queued while the process exits on its own (by an app's `beforeExit` listener that ran after
    // the exit flush): sent now, holding the process; an unref'd timer would let it end first.
    if (processHooks?.exiting()) return void this.flush()
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
