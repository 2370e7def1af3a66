/**
 * The queue of messages held as JSON text (browsers, workers, a `fetch` of one's own): each
 * message's string, made once when it was built; a batch's body is those strings joined inside
 * the envelope, once, when the batch is first sent. With a store (./persisted-queue.ts), every
 * message held is mirrored there until its batch is settled.
 *
 * (Closures, not classes: the browser build minifies their names away, and it has a budget.)
 */
import { cut, type BodyBuilder } from '../message/wire.js'
import type { MessageQueue, QueueBatch } from './message-queue.js'
import type { Store } from './page-store.js'

/** A queued message: its JSON text and that text's UTF-8 length. */
export interface TextMessage {
  readonly json: string
  readonly bytes: number
}

/**
 * `store`: where held messages are mirrored. `front`: where the next message held goes, or
 * `undefined` for last (the persisted queue puts recovered messages ahead of the page's own).
 */
export function textQueue(envelope: BodyBuilder, store?: Store, front?: () => number | undefined): MessageQueue {
  const items: TextMessage[] = []
  const batch = (messages: readonly TextMessage[]): QueueBatch => {
    let body: string | undefined
    /** Its halves, once split: they own its messages then. */
    let halves: [QueueBatch, QueueBatch] | undefined
    const half = Math.ceil(messages.length / 2)
    return {
      length: messages.length,
      size: envelope.size(messages),
      body: () => (body ??= envelope.build(messages, new Date().toISOString())),
      texts: () => messages.map((m) => m.json),
      halves: () => (halves = [batch(messages.slice(0, half)), batch(messages.slice(half))]),
      // (Again, it does nothing more: a store forgets a message once.)
      release: () => void (halves || store?.remove(messages)),
    }
  }
  return {
    get length() {
      return items.length
    },
    hold(built) {
      const message = { json: built.json, bytes: built.bytes }
      const at = front?.()
      if (at === undefined) items.push(message)
      else items.splice(at, 0, message)
      store?.add(message)
    },
    take: (count, maxCount, maxBodyBytes) => cut(items.splice(0, count), maxCount, envelope.overhead, maxBodyBytes).map(batch),
    hide: () => store?.hide(),
    texts: () => items.map((m) => m.json),
  }
}
