/**
 * The queue of a page that persists (option `persist`): the text queue, with every message it
 * holds (queued or in flight) mirrored into `localStorage` by the page store (./page-store.ts)
 * until it is settled, and the messages of pages that are gone recovered once, ahead of this
 * page's own.
 */
import type { BodyBuilder } from '../message/wire.js'
import type { BuiltMessage, MessageQueue } from './message-queue.js'
import { pageStore } from './page-store.js'
import { textQueue } from './text-queue.js'

/**
 * What the client does with messages recovered from pages that are gone: `hold`s them (each
 * counted against its limits like a new one; any it refuses is dropped and reported), or answers
 * false to leave them to another page (it is closed).
 */
export type Recover = (messages: BuiltMessage[]) => boolean

export function persistedQueue(writeKey: string, envelope: BodyBuilder, recover: Recover): MessageQueue {
  /** While recovering: where the next message held goes (ahead of this page's own). */
  let front: number | undefined
  const store = pageStore(writeKey, (messages) => {
    front = 0
    try {
      return recover(messages)
    } finally {
      front = undefined
    }
  })
  return textQueue(envelope, store, () => (front === undefined ? front : front++))
}
