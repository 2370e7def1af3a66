/**
 * What the platforms (./platform.ts) share: web-standard globals, and the probes that tell a page
 * from a worker (the browser build serves both; the server build may find itself in a page, under
 * a bundler that did not pick the browser build).
 */
import type { Transport } from '../transport/types.js'

const g = globalThis as unknown as {
  process?: { versions?: { node?: string } }
  document?: { cookie?: string; visibilityState?: string; addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener }
  window?: unknown
  location?: { protocol?: string }
  localStorage?: Storage
  navigator?: { locks?: LockManager }
  addEventListener?: typeof addEventListener
  removeEventListener?: typeof removeEventListener
}

/** A browser page (a window with a document), as opposed to a server runtime or a worker. */
export function isBrowserPage(): boolean {
  return typeof g.window !== 'undefined' && typeof g.document !== 'undefined' && !g.process?.versions?.node
}

/**
 * A browser page with Web Locks (every current browser, in a secure context: https or localhost).
 * Whether its `localStorage` works is only known by using it (see `pageStorage`).
 */
export function canPersist(): boolean {
  return isBrowserPage() && !!g.navigator?.locks
}

/** The page's `localStorage` and Web Locks; throws where they are missing or blocked. */
export function pageStorage(): { storage: Storage; locks: LockManager } {
  const storage = g.localStorage
  const locks = g.navigator?.locks
  if (!storage || !locks) throw new Error('localStorage or Web Locks unavailable')
  return { storage, locks }
}

/** A browser page or a browser web worker: where requests are subject to CORS. */
export function isBrowserLike(): boolean {
  if (isBrowserPage()) return true
  const scope = globalThis as unknown as { importScripts?: unknown; WorkerGlobalScope?: unknown }
  return typeof scope.importScripts === 'function' && typeof scope.WorkerGlobalScope !== 'undefined'
}

/** `localStorage.debug`, where there is one. */
export function readLocalStorageDebug(): string | undefined {
  try {
    return g.localStorage?.getItem('debug') ?? undefined
  } catch {
    // localStorage can throw on opaque origins or when storage is disabled.
    return undefined
  }
}

export type TimerHandle = ReturnType<typeof setTimeout>

/**
 * `setTimeout` within the range timers honour, looked up at call time (so test fake timers
 * apply): past 2^31 − 1 ms (about 24.8 days) timers fire at once, so a longer wait is that long; a
 * wait already over (a negative `ms`) is 0, which Node would otherwise warn about.
 */
export const boundedTimeout = (callback: () => void, ms: number): TimerHandle => setTimeout(callback, Math.min(Math.max(ms, 0), 2 ** 31 - 1))

/** Calls `handler` when a browser page is hidden or unloaded. Returns the unsubscribe function. */
export function onPageHide(handler: () => void): () => void {
  if (!isBrowserPage() || typeof g.addEventListener !== 'function') return () => {}
  const doc = g.document!
  const onVisibility = () => {
    if (doc.visibilityState === 'hidden') handler()
  }
  doc.addEventListener?.('visibilitychange', onVisibility)
  g.addEventListener('pagehide', handler)
  return () => {
    doc.removeEventListener?.('visibilitychange', onVisibility)
    g.removeEventListener?.('pagehide', handler)
  }
}

/** A version 4 UUID from `crypto.randomUUID`, else (outside a secure context) from `getRandomValues`. */
export function webRandomUUID(): string {
  const c = globalThis.crypto
  if (typeof c.randomUUID === 'function') {
    try {
      return c.randomUUID()
    } catch {
      // randomUUID exists but refuses outside a secure context in some browsers.
    }
  }
  return formatUUID(c.getRandomValues(new Uint8Array(16)))
}

/** RFC 4122 version 4 UUID text of 16 random bytes (its version and variant bits set here). */
export function formatUUID(bytes: Uint8Array): string {
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  // Each `x` is a byte, as two hex digits: 8-4-4-4-12.
  let i = 0
  return 'xxxx-xx-xx-xx-xxxxxx'.replace(/x/g, () => (bytes[i++] + 0x100).toString(16).slice(1))
}

let encoder: TextEncoder | undefined

/** Exact UTF-8 byte length: the length of the encoded text (native, and smaller than a counting loop). */
export const encodedLength = (text: string): number => (encoder ??= new TextEncoder()).encode(text).length

/** A debug line at debug level in pages and browser workers, else on the console's error stream. */
export const consoleSink = (line: string): void => (isBrowserLike() ? console.debug(line) : console.error(line))

/** The global `fetch`, looked up at each call (a test interceptor or polyfill installed later applies). */
export const globalFetch = ((input: string, init?: RequestInit) => globalThis.fetch(input, init)) as unknown as Transport

/** Does nothing: a platform's hook that has nothing to hook. */
export const nothing = (): (() => void) => () => {}

/** What option `identity` keeps its ids in: `localStorage`, or the same three methods on cookies or memory. */
export type KeyStore = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>

/**
 * Where option `identity` keeps its ids in a page: its `localStorage`, or first-party cookies (for
 * the whole site, a year, `SameSite=Lax`, `Secure` on https). `'memory'` in a browser worker,
 * which has neither; undefined where there is no page at all (a server rendering a page's code).
 * A store that refuses throws (the caller keeps the ids in memory then).
 */
export function identityStore(kind: 'localStorage' | 'cookie'): KeyStore | 'memory' | undefined {
  const doc = g.document
  if (!doc) return isBrowserLike() ? 'memory' : undefined
  // Looked up at each use: where it is missing or refuses (a sandboxed frame), that use throws.
  if (kind === 'localStorage') {
    return {
      getItem: (key) => g.localStorage!.getItem(key),
      setItem: (key, value) => g.localStorage!.setItem(key, value),
      removeItem: (key) => g.localStorage!.removeItem(key),
    }
  }
  // A year after its last write; expired at once when removed.
  const write = (key: string, value: string, seconds: number) =>
    void (doc.cookie = `${key}=${encodeURIComponent(value)}; path=/; max-age=${seconds}; SameSite=Lax${g.location?.protocol === 'https:' ? '; Secure' : ''}`)
  return {
    getItem: (key) => {
      const found = doc.cookie!.split('; ').find((pair) => pair.startsWith(`${key}=`))
      return found ? decodeURIComponent(found.slice(key.length + 1)) : null
    },
    setItem: (key, value) => write(key, value, 31_536_000),
    removeItem: (key) => write(key, '', 0),
  }
}
