/**
 * The page store behind ./persisted-queue.ts: `pageStore` mirrors the messages a page holds
 * (queued or in flight) into `localStorage`, so that a reload, a closed tab or a crashed page
 * loses nothing. Where storage is missing there is none: the queue keeps the messages in memory
 * only (the page owns them until they are delivered or reported).
 *
 * Tabs (design after Segment's analytics-next `priority-queue/persisted.ts`, which claims stored
 * items under a localStorage lock; ours uses Web Locks, which the browser releases when a page
 * dies, even when it crashes): each page stores its messages under its own key and holds a Web
 * Lock of the same name for as long as it lives. At start, a page asks for the lock of every
 * other key of its write key, and later for each key another page first writes (a `storage`
 * event); the browser grants it once that key's page is gone (at once if it already is, else
 * when that tab closes or crashes), to one page at a time. Only then does the page adopt the
 * key's messages (and sends them at once), and it keeps the lock for as long as it lives: two
 * tabs never both take one stored list.
 *
 * Delivery is at least once across pages: a message leaves storage when it is delivered or has
 * failed for good, so one sent with `keepalive` as its page went away (whose answer that page
 * never sees) is sent again by the next page, with the same `messageId`. And browsers write
 * localStorage in the background: a page gone just after taking a list over can leave it under
 * two keys. A page never takes a message it holds or has taken already; two pages taking the two
 * keys both send it.
 */
import type { SentMessage } from '../message/types.js'
import { encodedLength as utf8ByteLength, pageStorage, webRandomUUID as randomUUID } from '../platform/web.js'
import type { BuiltMessage } from './message-queue.js'

/** What the store keeps of a message: its JSON text (./text-queue.ts `TextMessage`). */
export interface StoredMessage {
  readonly json: string
}

export interface Store {
  /** A message was queued (built here, or adopted). */
  add(message: StoredMessage): void
  /** A batch was settled: each message delivered or failed for good. */
  remove(batch: readonly StoredMessage[]): void
  /** The page is hidden or going away: what is held is stored now. */
  hide(): void
}


/**
 * Characters of messages a page keeps in localStorage at most: the oldest it holds, up to this.
 * Browsers give an origin about 5 million characters in all, shared with the app, so a long
 * outage must not fill them; those beyond are held in memory only (delivered as usual while the
 * page lives), and the list is not rewritten for each of them.
 */
export const MAX_STORED_CHARS = 1_000_000

/**
 * The localStorage store. `adopt` receives the messages that dead pages with the same write key
 * left behind (and answers false to leave them, once the client is closed). Where storage is
 * missing, blocked or full, one line is logged and the store holds nothing more (memory only).
 */
export function pageStore(writeKey: string, adopt: (messages: BuiltMessage[]) => boolean): Store | undefined {
  const prefix = `isomorphic-analytics:${writeKey}:`
  const key = prefix + randomUUID()
  /** The messages held (queued or in flight), in order, as their JSON (unique: a messageId each). */
  const held = new Set<string>()
  /**
   * What this page has claimed, for its life: the other keys whose lock it asked for, and the
   * messages it took from them, as their JSON (which never starts as a key does). A list left
   * under two keys comes to this page as two grants, and the second may come after the first
   * list's messages were delivered, so no longer held: it takes none of them twice. (One set for
   * both: the browser build's size budget is tight.)
   */
  const claimed = new Set<string>()
  /** Writes wait for our lock (but see `hide`); after a failure, nothing is kept. */
  let locked = false
  let failed = false
  let scheduled = false
  /** The last write left messages out (over MAX_STORED_CHARS): one added now would be too. */
  let full = false

  const fail = (error: unknown) => {
    if (failed) return
    failed = true
    held.clear()
    try {
      storage.removeItem(key)
    } catch {
      // Storage is failing already.
    }
    console.warn(`isomorphic-analytics: localStorage failed (${error as string}); messages are kept in memory only.`)
  }
  let storage: Storage
  let locks: LockManager
  try {
    ;({ storage, locks } = pageStorage())
  } catch (error) {
    fail(error)
    return undefined
  }
  const guard = (fn: () => void, early?: boolean) => {
    if ((!locked && !early) || failed) return
    try {
      fn()
    } catch (error) {
      fail(error)
    }
  }
  // One write per synchronous burst: the list (its oldest MAX_STORED_CHARS), already serialised,
  // one message per line (JSON text holds no raw line break), so each is read back as the very
  // text that was queued: a bigint's digits included.
  const write = (early?: boolean) => {
    scheduled = full = false
    let text = ''
    // The oldest that fit; once one does not, none after it.
    for (const json of held) if (!(full ||= text.length + json.length >= MAX_STORED_CHARS)) text += (text && '\n') + json
    guard(() => (text ? storage.setItem(key, text) : storage.removeItem(key)), early)
  }
  const schedule = () => {
    if (!scheduled) queueMicrotask(write)
    scheduled = true
  }

  // Held until the page dies: a lock is what tells other pages that stored messages have an owner.
  const forever = new Promise(() => {})
  /** Whether the list under `other` was taken (then the lock is kept: see `claim`). */
  const adoptFrom = (other: string) => {
    const text = storage.getItem(other)
    if (!text) return
    let messages: BuiltMessage[]
    try {
      // One held or taken here already is not taken again: a page that went away just after taking
      // a list can leave it under both keys (its write landed, the removal not yet), and this page
      // may take both.
      messages = text.split('\n').filter((json) => !held.has(json) && !claimed.has(json) && claimed.add(json)).map((json) => ({ message: JSON.parse(json) as SentMessage, json, bytes: utf8ByteLength(json) }))
    } catch {
      // Not what we wrote: nothing there can be sent.
      return storage.removeItem(other)
    }
    if (!adopt(messages)) return
    // Ours first, then theirs removed only if ours was written: a crash or a full storage in
    // between duplicates, never loses. (What is over MAX_STORED_CHARS is in memory only, as ours.)
    write()
    if (!failed) storage.removeItem(other)
    return true
  }
  const claim = (other: string | null) => {
    // Same length: a write key that merely starts with ours (`a` and `a:b`) is not ours.
    if (failed || other?.length !== key.length || !other.startsWith(prefix) || other === key || claimed.has(other)) return
    claimed.add(other)
    // Granted once its page is gone (at once if it is already), to one waiting page at a time.
    // The page that takes the list keeps the lock for its own lifetime, so a page whose view of
    // localStorage lags behind can never read the list after it was taken (it finds nothing when
    // it gets it). One that takes nothing (a closed client) lets it go to the next.
    locks.request(other, () => {
      let taken: unknown
      guard(() => (taken = adoptFrom(other)))
      return taken && forever
    }).catch(fail)
  }
  locks.request(key, () => {
    locked = true
    write()
    guard(() => {
      for (const other of Object.keys(storage)) claim(other)
    })
    // A page opened after this one writes its list later: claimed when it first does.
    addEventListener('storage', (event) => claim(event.key))
    return forever
  }).catch(fail)

  return {
    add(message) {
      if (failed) return
      held.add(message.json)
      if (!full) schedule()
    },
    remove(batch) {
      if (failed) return
      for (const m of batch) held.delete(m.json)
      schedule()
    },
    // Hidden or leaving before our lock was granted (a task or more after it was asked for): we
    // write now all the same, or a page that tracks and navigates in one task would keep nothing.
    // Not sooner: Chromium can grant our lock to a tab already open, told of our key by a storage
    // event, before it has registered our own earlier request, and that tab takes a live page's
    // list (chromium-persist-tabs.test.ts, "a tab opened after this one", failed so when pages
    // wrote before their grant). A page that is leaving loses nothing by it; one merely hidden
    // this early may have its messages sent twice, by it and that tab.
    hide() {
      if (!locked) write(true)
    },
  }
}
