/**
 * The one place that probes the runtime: timers that never keep a process alive, the `DEBUG`
 * setting, process-exit and page-hide hooks, how a message is queued, and random UUIDs (how
 * requests are sent: ./transport.ts). Everything else uses web-standard globals only.
 *
 * In the browser build (tsup defines `__BROWSER__` as `true`: `dist/index.browser.js`, the
 * `<script>` file) the guards `typeof __BROWSER__ === 'boolean' && __BROWSER__` are constant, so
 * the Node, Bun and Deno paths below are dropped from it; everywhere else they are false.
 */
import { utf8Length } from '../limits.js'
import { pooledUUID } from './pooled-uuid.js'
import type { StopSignal } from '../transport/stop.js'

interface NodeLikeProcess {
  env?: Record<string, string | undefined>
  on?(event: string, listener: (...args: unknown[]) => void): unknown
  off?(event: string, listener: (...args: unknown[]) => void): unknown
  versions?: { node?: string; bun?: string }
}

interface DenoLike {
  env?: { get(name: string): string | undefined }
  permissions?: { querySync?(descriptor: { name: 'env'; variable: string }): { state: string } }
  unrefTimer?(id: number): void
}

const g = globalThis as unknown as {
  process?: NodeLikeProcess
  Deno?: DenoLike
  document?: { visibilityState?: string; addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener }
  window?: unknown
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

/** The `DEBUG` setting: the environment variable on servers, `localStorage.debug` in browsers. */
export function readDebugSetting(): string | undefined {
  if (typeof __BROWSER__ === 'boolean' && __BROWSER__) return readLocalStorageDebug()
  // Deno first: its `process.env` and `Deno.env` both show an interactive permission prompt
  // without --allow-env, so read DEBUG only when env access is already granted.
  if (g.Deno) return readDenoEnv('DEBUG')
  try {
    const fromProcess = g.process?.env?.DEBUG
    if (fromProcess !== undefined) return fromProcess
  } catch {
    // Some runtimes throw on env access without permission.
  }
  return readLocalStorageDebug()
}

function readLocalStorageDebug(): string | undefined {
  try {
    return g.localStorage?.getItem('debug') ?? undefined
  } catch {
    // localStorage can throw on opaque origins or when storage is disabled.
    return undefined
  }
}

function readDenoEnv(name: string): string | undefined {
  try {
    const permissions = g.Deno?.permissions
    if (typeof permissions?.querySync === 'function' && permissions.querySync({ name: 'env', variable: name }).state !== 'granted') return undefined
    return g.Deno?.env?.get(name)
  } catch {
    return undefined
  }
}

export type TimerHandle = ReturnType<typeof setTimeout>

/**
 * `setTimeout` that never keeps the process alive (Node, Bun: `unref`; Deno: `unrefTimer`).
 * Looks the global up at call time, so test fake timers apply.
 */
export function setBackgroundTimeout(callback: () => void, ms: number): TimerHandle {
  // Timers fire at once past 2^31 − 1 ms (about 24.8 days): a longer wait is that long. A wait
  // already over (a negative `ms`) is 0, which Node would otherwise warn about.
  const handle = setTimeout(callback, Math.min(Math.max(ms, 0), 2 ** 31 - 1))
  unrefTimer(handle)
  return handle
}

export function unrefTimer(handle: TimerHandle): void {
  if (typeof __BROWSER__ === 'boolean' && __BROWSER__) return
  const h = handle as unknown as { unref?: () => void }
  if (typeof h === 'object' && typeof h?.unref === 'function') h.unref()
  else if (typeof handle === 'number' && typeof g.Deno?.unrefTimer === 'function') {
    try {
      g.Deno.unrefTimer(handle)
    } catch {
      // A fake timer id that Deno does not know.
    }
  }
}

/**
 * Keeps a server runtime's process alive until the returned function is called: a referenced
 * timer that never fires. While a caller awaits a flush, every batch may be sleeping on a
 * background timer (a retry delay, a Retry-After), and without this hold Node would exit (ESM
 * top-level await: code 13) or drop the work (CommonJS) before the flush settles.
 */
export function holdProcess(): () => void {
  if (typeof __BROWSER__ === 'boolean' && __BROWSER__) return () => {}
  const handle = setInterval(() => {}, 2 ** 30)
  return () => clearInterval(handle)
}

/** A sleep on a background timer that an abort signal cuts short (rejecting with its reason). */
export function sleep(ms: number, signal?: StopSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(handle)
      reject(signal!.reason)
    }
    const handle = setBackgroundTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort) // An abort fires once.
  })
}

interface OwnerHook {
  owner: WeakRef<object>
  handler: (owner: never) => void
}

/**
 * Owners waiting for a process event, each held weakly: an owner that nothing else holds (a
 * client with nothing to send, flushed but never closed, as a function per request leaves it) is
 * collected, and its hook with it. One process listener (`listen`, made on the first hook) serves
 * them all; `run` calls each live owner's handler.
 */
class OwnerHooks {
  readonly #hooks = new Set<OwnerHook>()
  #forgotten: FinalizationRegistry<OwnerHook> | undefined
  readonly #listen: (run: () => void) => boolean

  /** `listen` subscribes `run` to the process event, or answers false where there is none. */
  constructor(listen: (run: () => void) => boolean) {
    this.#listen = listen
  }

  add<T extends object>(owner: T, handler: (owner: T) => void): () => void {
    if (this.#forgotten === undefined) {
      if (!this.#listen(() => {
        for (const hook of this.#hooks) {
          const alive = hook.owner.deref()
          if (alive !== undefined) (hook.handler as (owner: object) => void)(alive)
        }
      })) return () => {}
      this.#forgotten = new FinalizationRegistry((hook) => this.#hooks.delete(hook))
    }
    const hook: OwnerHook = { owner: new WeakRef(owner), handler }
    this.#hooks.add(hook)
    this.#forgotten.register(owner, hook, hook)
    return () => {
      this.#hooks.delete(hook)
      this.#forgotten?.unregister(hook)
    }
  }
}

/** Subscribes `run` to a Node or Bun `process` event, else (Deno) to the global `event`. */
function processEvent(nodeEvent: string, denoEvent: string, run: () => void): boolean {
  const proc = g.process
  if (proc?.versions?.node && typeof proc.on === 'function') proc.on(nodeEvent, run)
  else if (g.Deno && typeof g.addEventListener === 'function' && !isBrowserPage()) g.addEventListener(denoEvent, run)
  else return false
  return true
}

let idleExitStarted = false

const idleExitHooks = /* @__PURE__ */ new OwnerHooks((run) => processEvent('beforeExit', 'beforeunload', () => {
  idleExitStarted = true
  run()
}))

const exitHooks = /* @__PURE__ */ new OwnerHooks((run) => processEvent('exit', 'unload', run))

/**
 * Whether the process has begun to exit on its own (the hooks of `onProcessIdleExit` ran). From
 * then on, work must be started at once: a later `beforeExit` listener of the app's that queues
 * something is not followed by another `beforeExit` unless something keeps the process running.
 */
export const processExiting = (): boolean => idleExitStarted

/**
 * Calls `handler(owner)` when the process is about to exit on its own with nothing left to do
 * (Node and Bun `beforeExit`, Deno `beforeunload`), unless `owner` was collected. Work the handler
 * starts keeps the process running until it ends. Returns the unsubscribe function. `handler`
 * must not hold `owner` itself (it receives it).
 */
export function onProcessIdleExit<T extends object>(owner: T, handler: (owner: T) => void): () => void {
  if (typeof __BROWSER__ === 'boolean' && __BROWSER__) return () => {}
  return idleExitHooks.add(owner, handler)
}

/**
 * Calls `handler(owner)` as the process exits, whatever the cause that lets code run (the end of
 * its work, `process.exit()`, a signal handler that calls it; not SIGKILL), unless `owner` was
 * collected: Node and Bun `exit`, Deno `unload`. The handler must be synchronous; nothing it starts
 * will run. Returns the unsubscribe function. `handler` must not hold `owner` itself.
 */
export function onProcessExit<T extends object>(owner: T, handler: (owner: T) => void): () => void {
  if (typeof __BROWSER__ === 'boolean' && __BROWSER__) return () => {}
  return exitHooks.add(owner, handler)
}

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

interface BufferLike {
  from(text: string): Uint8Array
  byteLength(text: string): number
}

const nodeBuffer = () => (globalThis as { Buffer?: BufferLike }).Buffer

let encoder: TextEncoder | undefined

/**
 * Exact UTF-8 byte length: `Buffer.byteLength` where it exists (a native count), else
 * `utf8Length`. In the browser build, the length of the encoded text: a native encoding of a
 * message-sized string costs less there than the bytes of a counting loop in every bundle.
 */
export const utf8ByteLength: (text: string) => number = typeof __BROWSER__ === 'boolean' && __BROWSER__
  ? (text) => (encoder ??= new TextEncoder()).encode(text).length
  : (text) => nodeBuffer()?.byteLength(text) ?? utf8Length(text)

/** Node itself, as opposed to Bun and Deno, which also define `process.versions.node`. */
export function isNode(): boolean {
  const versions = g.process?.versions
  return typeof versions?.node === 'string' && versions.bun === undefined && g.Deno === undefined
}

/** RFC 4122 version 4 UUID; works where `crypto.randomUUID` is missing (insecure http pages). */
export function randomUUID(): string {
  if (!(typeof __BROWSER__ === 'boolean' && __BROWSER__)) {
    const id = pooledUUID()
    if (id !== undefined) return id
  }
  const c = globalThis.crypto as Crypto | undefined
  if (typeof c?.randomUUID === 'function') {
    try {
      return c.randomUUID()
    } catch {
      // randomUUID exists but refuses outside a secure context in some browsers.
    }
  }
  const bytes = new Uint8Array(16)
  // Every browser has getRandomValues (randomUUID needs a secure context): the browser build
  // keeps no fallback for a runtime without it.
  if ((typeof __BROWSER__ === 'boolean' && __BROWSER__) || typeof c?.getRandomValues === 'function') c!.getRandomValues(bytes)
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256)
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  // Each `x` is a byte, as two hex digits: 8-4-4-4-12.
  let i = 0
  return 'xxxx-xx-xx-xx-xxxxxx'.replace(/x/g, () => (bytes[i++] + 0x100).toString(16).slice(1))
}
