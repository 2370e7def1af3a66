/**
 * The queue seam's contract (src/queue/message-queue.ts), one suite run against every
 * implementation: the text queue, the page-persisted queue (with an in-memory localStorage and Web
 * Locks: the real browser is test/runtimes/chromium-persist*.test.ts) and the Node byte store.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BodyBuilder } from '../../src/message/wire.js'
import { utf8Length } from '../../src/limits.js'
import { buildMessage } from '../../src/client/build-message.js'
import type { BuiltMessage } from '../../src/queue/message-queue.js'
import { LIBRARY } from '../../src/message/wire.js'
import type { SentMessage } from '../../src/message/types.js'
import { ByteQueue } from '../../src/queue/byte-store.js'
import type { MessageQueue, QueueBatch } from '../../src/queue/message-queue.js'
import { persistedQueue, type Recover } from '../../src/queue/persisted-queue.js'
import { textQueue } from '../../src/queue/text-queue.js'

const WRITE_KEY = 'kéy'
const NOW = new Date('2026-11-28T10:00:00.000Z')
const defaults = { context: undefined, integrations: undefined }

/** An in-memory page: `localStorage`, Web Locks (granted in order, held until released) and `storage` listeners. */
function fakePage() {
  const items = new Map<string, string>()
  const storage = {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, String(value)),
    removeItem: (key: string) => void items.delete(key),
    key: (i: number) => [...items.keys()][i] ?? null,
    get length() { return items.size },
    clear: () => items.clear(),
  }
  // `Object.keys(localStorage)` lists its keys: a proxy that shows them as own properties.
  const localStorage = new Proxy(storage, {
    ownKeys: () => [...items.keys()],
    getOwnPropertyDescriptor: (_t, key) => (typeof key === 'string' && items.has(key) ? { value: items.get(key), enumerable: true, configurable: true } : undefined),
  })
  const held = new Set<string>()
  const waiting = new Map<string, Array<() => void>>()
  const locks = {
    request(name: string, callback: () => unknown) {
      return new Promise((resolve, reject) => {
        const grant = () => {
          held.add(name)
          Promise.resolve().then(callback).then((result) => {
            // A callback's promise that never settles holds the lock for the page's life.
            held.delete(name)
            waiting.get(name)?.shift()?.()
            resolve(result)
          }, reject)
        }
        if (held.has(name)) (waiting.get(name) ?? waiting.set(name, []).get(name)!).push(grant)
        else grant()
      })
    },
  }
  return { items, localStorage, locks }
}

interface Made {
  queue: MessageQueue
  /** Lets the queue's background work (a persisted queue's store writes and lock grants) run. */
  settle(): Promise<void>
}

const implementations: Array<[name: string, make: (recover?: Recover) => Made]> = [
  ['the text queue', () => ({ queue: textQueue(new BodyBuilder(WRITE_KEY, false, utf8Length)), settle: async () => {} })],
  ['the page-persisted queue', (recover = () => true) => ({ queue: persistedQueue(WRITE_KEY, new BodyBuilder(WRITE_KEY, true, utf8Length), recover), settle: () => new Promise((r) => setTimeout(r, 0)) })],
  ['the Node byte store', () => ({ queue: new ByteQueue(new BodyBuilder(WRITE_KEY, false, utf8Length)), settle: async () => {} })],
]

let page: ReturnType<typeof fakePage>

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(NOW)
  page = fakePage()
  vi.stubGlobal('localStorage', page.localStorage)
  vi.stubGlobal('navigator', { locks: page.locks })
  vi.stubGlobal('addEventListener', () => {})
})

afterEach(() => {
  vi.useRealTimers()
  vi.unstubAllGlobals()
})

/** Messages of every kind of text: ASCII, Latin-1, other scripts, emoji, a bigint, a context of its own. */
function built(queue: MessageQueue, count: number, from = 0): BuiltMessage[] {
  return Array.from({ length: count }, (_, i) => {
    const n = from + i
    const input = n % 4 === 0
      ? { userId: `u${n}`, event: 'Order Completed', properties: { n, total: 12.5 } }
      : n % 4 === 1
        ? { anonymousId: `ä${n}`, event: 'Café crème 東京', properties: { n, mood: '😀' } }
        : n % 4 === 2
          ? { userId: `u${n}`, event: 'Big', properties: { n, big: 12345678901234567890n } }
          : { userId: `u${n}`, event: 'Ctx', properties: { n }, context: { ip: '127.0.0.1' } }
    return buildMessage('track', input, defaults, queue.keepParts)
  })
}

/** What a batch's body must be: `JSON.stringify` of the batch (a bigint as its digits). */
function expectedBody(messages: readonly SentMessage[], plainText: boolean): string {
  const body = { batch: messages, sentAt: NOW.toISOString(), context: { library: LIBRARY }, ...(plainText && { writeKey: WRITE_KEY }) }
  return JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? `@@${v}@@` : v)).replace(/"@@(\d+)@@"/g, '$1')
}

const bodyText = (batch: QueueBatch) => {
  const body = batch.body()
  return typeof body === 'string' ? body : Buffer.from(body).toString('utf8')
}
const bodyBytes = (batch: QueueBatch) => {
  const body = batch.body()
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

describe.each(implementations)('%s', (name, make) => {
  const plainText = name === 'the page-persisted queue'

  it('makes each body byte for byte JSON.stringify of its batch, sized exactly, in order, within the limits', () => {
    const { queue } = make()
    const messages = built(queue, 23)
    for (const m of messages) queue.hold(m)
    expect(queue.length).toBe(23)
    const batches = queue.take(23, 10)
    expect(queue.length).toBe(0)
    expect(batches.map((b) => b.length)).toEqual([10, 10, 3])
    let at = 0
    for (const batch of batches) {
      const sent = messages.slice(at, at += batch.length).map((m) => m.message)
      expect(bodyText(batch)).toBe(expectedBody(sent, plainText))
      expect(batch.size).toBe(bodyBytes(batch))
      expect(batch.texts().map((t) => JSON.parse(t) as unknown)).toEqual(JSON.parse(JSON.stringify(sent, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))))
      // Made once: a retry sends the same body (and `sentAt`), even later.
      vi.setSystemTime(NOW.getTime() + 5000)
      expect(bodyText(batch)).toBe(expectedBody(sent, plainText))
      vi.setSystemTime(NOW)
      batch.release()
    }
  })

  it('takes only `count`, and cuts by body bytes (a message over the limit alone)', () => {
    const { queue } = make()
    const messages = built(queue, 8)
    for (const m of messages) queue.hold(m)
    const first = queue.take(3, 100)
    expect(first.map((b) => b.length)).toEqual([3])
    expect(queue.length).toBe(5)
    const limit = first[0].size - 1
    // Bodies of at most `limit` bytes: never the three of the first batch together.
    const rest = queue.take(5, 100, limit)
    for (const batch of rest) expect(batch.length === 1 || batch.size <= limit).toBe(true)
    expect(rest.reduce((n, b) => n + b.length, 0)).toBe(5)
    expect(rest.flatMap((b) => b.texts()).map((t) => (JSON.parse(t) as { properties: { n: number } }).properties.n)).toEqual([3, 4, 5, 6, 7])
    for (const batch of [...first, ...rest]) batch.release()
  })

  it('splits a batch in halves (a 413): each half its own body, byte for byte, the parent released first', () => {
    const { queue } = make()
    const messages = built(queue, 7)
    for (const m of messages) queue.hold(m)
    const [batch] = queue.take(7, 10)
    bodyText(batch)
    const [a, b] = batch.halves()
    batch.release()
    expect([a.length, b.length]).toEqual([4, 3])
    // Messages held after the parent's release do not touch the halves' messages.
    for (const m of built(queue, 30, 100)) queue.hold(m)
    expect(bodyText(a)).toBe(expectedBody(messages.slice(0, 4).map((m) => m.message), plainText))
    expect(bodyText(b)).toBe(expectedBody(messages.slice(4).map((m) => m.message), plainText))
    const [a1, a2] = a.halves()
    a.release()
    expect([a1.length, a2.length]).toEqual([2, 2])
    expect(bodyText(a2)).toBe(expectedBody(messages.slice(2, 4).map((m) => m.message), plainText))
    for (const half of [a1, a2, b]) half.release()
    for (const rest of queue.take(queue.length, 100)) rest.release()
  })

  it('a double release is harmless: other batches keep their messages and bodies', () => {
    const { queue } = make()
    const messages = built(queue, 40)
    for (const m of messages) queue.hold(m)
    const [first, second] = queue.take(40, 20)
    bodyText(first)
    first.release()
    first.release()
    first.release(Promise.resolve())
    // New messages go where a wrongly freed region would be.
    const more = built(queue, 40, 40)
    for (const m of more) queue.hold(m)
    expect(bodyText(second)).toBe(expectedBody(messages.slice(20).map((m) => m.message), plainText))
    const [third] = queue.take(40, 40)
    expect(bodyText(third)).toBe(expectedBody(more.map((m) => m.message), plainText))
    second.release()
    second.release()
    third.release()
  })

  if (name === 'the page-persisted queue') {
    it('recovers the messages of a page that is gone once, ahead of its own, and forgets them once settled', async () => {
      // A page that is gone left two messages under its key (no one holds its lock).
      const left = [{ userId: 'gone', event: 'Left 1' }, { userId: 'gone', event: 'Left 2' }].map((input) => buildMessage('track', input, defaults))
      const goneKey = `isomorphic-analytics:${WRITE_KEY}:${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}`
      page.items.set(goneKey, left.map((m) => m.json).join('\n'))
      const recovered: string[][] = []
      let queue!: MessageQueue
      const made = make((messages) => {
        recovered.push(messages.map((m) => m.json))
        for (const m of messages) queue.hold(m)
        return true
      })
      queue = made.queue
      const own = built(queue, 2)
      for (const m of own) queue.hold(m)
      await made.settle()
      await made.settle()
      expect(recovered).toEqual([left.map((m) => m.json)])
      // Ahead of this page's own; the gone page's list moved under this page's key.
      const [batch] = queue.take(4, 10)
      expect(batch.texts()).toEqual([...left.map((m) => m.json), ...own.map((m) => m.json)])
      expect(page.items.has(goneKey)).toBe(false)
      const stored = [...page.items.values()]
      expect(stored).toHaveLength(1)
      expect(stored[0].split('\n').sort()).toEqual(batch.texts().sort())
      // A second page finds nothing left to recover.
      const again: unknown[] = []
      const other = make((messages) => (again.push(messages), true))
      await other.settle()
      await other.settle()
      expect(again).toEqual([])
      // Settled: out of storage.
      batch.release()
      await made.settle()
      expect([...page.items.values()].filter((text) => text.includes('"Left 1"'))).toEqual([])
    })
  }
})

describe('the Node byte store', () => {
  it('frees a body only once the transport says it is written', async () => {
    const queue = new ByteQueue(new BodyBuilder(WRITE_KEY, false, utf8Length))
    for (const m of built(queue, 3)) queue.hold(m)
    const [batch] = queue.take(3, 10)
    const body = batch.body()
    const copy = Buffer.from(body)
    let written!: () => void
    batch.release(new Promise<void>((done) => (written = done)))
    // Still being written: new messages do not land on it.
    for (const m of built(queue, 50, 10)) queue.hold(m)
    expect(Buffer.from(body).equals(copy)).toBe(true)
    written()
    await new Promise((r) => setImmediate(r))
    for (const rest of queue.take(queue.length, 100)) rest.release()
  })
})
