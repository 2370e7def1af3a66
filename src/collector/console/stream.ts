/**
 * `GET /v1/admin/messages/stream`: the live view as Server-Sent Events. The console reads it with
 * `fetch`, so the admin token stays in the `Authorization` header (an `EventSource` could only
 * carry it in the URL). The first event holds what changed since `since`; then one event per
 * burst of changes (gathered in a microtask), only while the reader keeps up: a slow reader gets
 * one event with everything that changed once it reads again, never a growing backlog. Each event
 * is `event: messages`, `id: <version>` and `data:` the answer `GET /v1/admin/messages` gives
 * (integers beyond 2^53 written digit for digit, as in `messagesResponse`). A burst larger than
 * one answer's `limit` goes as several events, a page each, as fast as the reader takes them.
 * Closing the collector ends every stream.
 */
import { stringifyExact } from '../../message/exact-json.js'
import type { MessageRecord } from './recorder.js'

export interface MessagesAnswer {
  /** Names the collector process (a new one after a restart): a reader drops what it had from another. */
  boot: string
  /** Ask from here next (`since`). */
  version: number
  messages: MessageRecord[]
  /** More changes wait after `version` (the stream sends them next). */
  more?: true
  /**
   * Durable mode: successful deliveries not listed since this process started (past the
   * 100-a-second follow bound only successes are left out; every failure and retry is listed).
   */
  unlisted?: number
}

const encoder = new TextEncoder()

const frame = (answer: MessagesAnswer) =>
  encoder.encode(`event: messages\nid: ${answer.version}\ndata: ${stringifyExact(answer, true)}\n\n`)

export class MessageStreams {
  readonly #ends = new Set<() => void>()
  #closed = false

  constructor(readonly subscribe: (listener: () => void) => () => void) {}

  /** Streams `select(version)` from `since` on, after each change. */
  open(select: (since: number) => MessagesAnswer, since: number): Response {
    let version = since
    let unlisted: number | undefined
    let waiting = false
    let stopped = false
    let controller!: ReadableStreamDefaultController<Uint8Array>
    const send = (always: boolean) => {
      waiting = false
      if (stopped) return
      let answer: MessagesAnswer
      try {
        answer = select(version)
      } catch (error) {
        // (Called from a change's microtask too: thrown there, it would end the process.) The
        // stream ends with the error; the page reconnects.
        stop()
        controller.error(error)
        return
      }
      version = answer.version
      // A count of unlisted successes that grew is news too, with no record changed.
      if (always || answer.messages.length > 0 || answer.unlisted !== unlisted) controller.enqueue(frame(answer))
      unlisted = answer.unlisted
      // A page of a larger burst: the rest goes as soon as the reader takes this one (`pull`).
      if (answer.more) waiting = true
    }
    const unsubscribe = this.subscribe(() => {
      if (waiting) return
      waiting = true
      queueMicrotask(() => {
        if (waiting && (controller.desiredSize ?? 0) > 0) send(false)
      })
    })
    const stop = () => {
      stopped = true
      unsubscribe()
      this.#ends.delete(end)
    }
    const end = () => {
      stop()
      controller.close()
    }
    this.#ends.add(end)
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c
        send(true)
        // Opened after the collector closed: what there is, then the end.
        if (this.#closed) end()
      },
      // The reader caught up: what changed meanwhile goes now.
      pull: () => (waiting ? send(false) : undefined),
      cancel: stop,
    })
    return new Response(body, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' },
    })
  }

  /** Ends every open stream. */
  close(): void {
    this.#closed = true
    for (const end of [...this.#ends]) end()
  }
}
