/**
 * Where the client keeps the messages it holds (queued or in flight) besides its own queue. The
 * choice is made once, in the constructor: `memoryStore` keeps nothing more (the process or page
 * owns the messages until they are delivered or reported); `pageStore` mirrors them into
 * `localStorage`, so that a reload, a closed tab or a crashed page loses nothing.
 *
 * Tabs (design after Segment's analytics-next `priority-queue/persisted.ts`, which claims stored
 * items under a localStorage lock; ours uses Web Locks, which the browser releases when a page
 * dies, even when it crashes): each page stores its messages under its own key and holds a Web
 * Lock of the same name for as long as it lives. At start, a page asks for the lock of every
 * other key of its write key; the browser grants it once that key's page is gone (at once if it
 * already is, else when that tab closes or crashes), to one page at a time. Only then does the
 * page adopt the key's messages, and it keeps the lock for as long as it lives: two tabs never
 * both send a stored message.
 *
 * Delivery is at least once across pages: a message leaves storage when it is delivered or has
 * failed for good, so one sent with `keepalive` as its page went away (whose answer that page
 * never sees) is sent again by the next page, with the same `messageId`.
 */
import type { SentMessage } from '../message/types.js'
import { serializeMessage } from '../message/serialize.js'
import { pageStorage, randomUUID } from '../platform/runtime.js'
import { type BuiltMessage, type QueuedMessage } from './build-message.js'

export interface Store {
  /** A message was queued (built here, or adopted). */
  add(message: QueuedMessage): void
  /** A batch was settled: each message delivered or failed for good. */
  remove(batch: readonly QueuedMessage[]): void
}

export const memoryStore: Store = { add() {}, remove() {} }

/**
 * The localStorage store. `adopt` receives the messages that dead pages with the same write key
 * left behind (and answers false to leave them, once the client is closed). Where storage is
 * missing, blocked or full, one line is logged and the store holds nothing more (memory only).
 */
export function pageStore(writeKey: string, adopt: (messages: BuiltMessage[]) => boolean): Store {
  const prefix = `isomorphic-analytics:${writeKey}:`
  const key = prefix + randomUUID()
  /** The messages held (queued or in flight), in order. */
  const held = new Set<QueuedMessage>()
  /** Writes wait for our lock; after a failure, nothing is kept. */
  let locked = false
  let failed = false
  let scheduled = false

  const fail = (error: unknown) => {
    if (failed) return
    failed = true
    held.clear()
    try {
      storage.removeItem(key)
    } catch {
      // Storage is failing already.
    }
    console.warn(`isomorphic-analytics: localStorage failed (${String(error)}); messages are kept in memory only.`)
  }
  let storage: Storage
  let locks: LockManager
  try {
    ;({ storage, locks } = pageStorage())
  } catch (error) {
    fail(error)
    return memoryStore
  }
  const guard = (fn: () => void) => {
    if (!locked || failed) return
    try {
      fn()
    } catch (error) {
      fail(error)
    }
  }
  // One write per synchronous burst: the whole list, already serialised.
  const write = () => {
    scheduled = false
    guard(() => (held.size ? storage.setItem(key, `[${[...held].map((m) => m.json).join(',')}]`) : storage.removeItem(key)))
  }
  const schedule = () => {
    if (!scheduled) queueMicrotask(write)
    scheduled = true
  }

  // Held until the page dies: a lock is what tells other pages that stored messages have an owner.
  const forever = () => new Promise(() => {})
  const adoptFrom = (other: string) => {
    const text = storage.getItem(other)
    if (!text) return
    let messages: BuiltMessage[]
    try {
      messages = (JSON.parse(text) as Array<Record<string, unknown>>).map((m) => ({ message: m as unknown as SentMessage, ...serializeMessage(m) }))
    } catch {
      // Not what we wrote: nothing there can be sent.
      return storage.removeItem(other)
    }
    if (!adopt(messages)) return
    // Ours first, then theirs removed: a crash in between duplicates, never loses.
    write()
    storage.removeItem(other)
  }
  locks.request(key, () => {
    locked = true
    write()
    guard(() => {
      for (let i = 0; i < storage.length; i++) {
        const other = storage.key(i)!
        // Same length: a write key that merely starts with ours (`a` and `a:b`) is not ours.
        if (other.length !== key.length || !other.startsWith(prefix) || other === key) continue
        // Granted once its page is gone (at once if it is already), and only to one waiting
        // page, which keeps it for its own lifetime, so a page whose view of localStorage lags
        // behind can never read the list after it was taken (it finds nothing when it gets it).
        locks.request(other, () => {
          guard(() => adoptFrom(other))
          return forever()
        }).catch(fail)
      }
    })
    return forever()
  }).catch(fail)

  return {
    add(message) {
      if (failed) return
      held.add(message)
      schedule()
    },
    remove(batch) {
      if (failed) return
      for (const m of batch) held.delete(m)
      schedule()
    },
  }
}
