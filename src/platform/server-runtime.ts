/**
 * Server runtimes (Node, Bun, Deno): the process, its environment, its timers and its UUIDs, for
 * ./server.ts. Nothing here runs in a page or a worker (where each probe finds nothing).
 */
import { utf8Length } from '../limits.js'
import { boundedTimeout, formatUUID, isBrowserPage, readLocalStorageDebug, type TimerHandle } from './web.js'

interface NodeLikeProcess {
  env?: Record<string, string | undefined>
  on?(event: string, listener: (...args: unknown[]) => void): unknown
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
  addEventListener?: typeof addEventListener
}

/** The `DEBUG` environment variable (where a server bundle runs in a page: `localStorage.debug`). */
export function readDebugSetting(): string | undefined {
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

function readDenoEnv(name: string): string | undefined {
  try {
    const permissions = g.Deno?.permissions
    if (typeof permissions?.querySync === 'function' && permissions.querySync({ name: 'env', variable: name }).state !== 'granted') return undefined
    return g.Deno?.env?.get(name)
  } catch {
    return undefined
  }
}

/** `setTimeout` that never keeps the process alive (Node, Bun: `unref`; Deno: `unrefTimer`). */
export function setBackgroundTimeout(callback: () => void, ms: number): TimerHandle {
  const handle = boundedTimeout(callback, ms)
  const h = handle as unknown as { unref?: () => void }
  if (typeof h === 'object' && typeof h?.unref === 'function') h.unref()
  else if (typeof handle === 'number' && typeof g.Deno?.unrefTimer === 'function') {
    try {
      g.Deno.unrefTimer(handle)
    } catch {
      // A fake timer id that Deno does not know.
    }
  }
  return handle
}

/**
 * Keeps the process alive until the returned function is called: a referenced timer that never
 * fires. While a caller awaits a flush, every batch may be sleeping on a background timer (a retry
 * delay, a Retry-After), and without this hold Node would exit (ESM top-level await: code 13) or
 * drop the work (CommonJS) before the flush settles.
 */
export function holdProcess(): () => void {
  const handle = setInterval(() => {}, 2 ** 30)
  return () => clearInterval(handle)
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
  return idleExitHooks.add(owner, handler)
}

/**
 * Calls `handler(owner)` as the process exits, whatever the cause that lets code run (the end of
 * its work, `process.exit()`, a signal handler that calls it; not SIGKILL), unless `owner` was
 * collected: Node and Bun `exit`, Deno `unload`. The handler must be synchronous; nothing it starts
 * will run. Returns the unsubscribe function. `handler` must not hold `owner` itself.
 */
export function onProcessExit<T extends object>(owner: T, handler: (owner: T) => void): () => void {
  return exitHooks.add(owner, handler)
}

interface BufferLike {
  byteLength(text: string): number
}

/** Exact UTF-8 byte length: `Buffer.byteLength` where it exists (a native count), else counted. */
export const bufferLength = (text: string): number => (globalThis as { Buffer?: BufferLike }).Buffer?.byteLength(text) ?? utf8Length(text)

/** Node itself, as opposed to Bun and Deno, which also define `process.versions.node`. */
export function isNode(): boolean {
  const versions = g.process?.versions
  return typeof versions?.node === 'string' && versions.bun === undefined && g.Deno === undefined
}

/*
 * UUIDs: the server platform's `randomUUID`, version 4 UUIDs from a pool of random bytes (from
 * `crypto.getRandomValues`, as Node's own are), each written as one flat string. Node's
 * `crypto.randomUUID` builds its string from many concatenations, garbage that each `track()`
 * would leave in the young generation; the interleaved A/B in docs/performance.md ("The client's
 * hot path") keeps this pool for what it saves a `track()`.
 */
interface Latin1Buffer extends Uint8Array {
  latin1Slice(start: number, end: number): string
}

const POOL_BYTES = 4096
const HEX = [...'0123456789abcdef'].map((c) => c.charCodeAt(0))
const DASH = 45

let pool: Uint8Array | undefined
let next = POOL_BYTES
let text: Latin1Buffer | undefined

/** A UUID, or `undefined` where there is no `Buffer` with `latin1Slice` or no `crypto.getRandomValues`. */
function pooledUUID(): string | undefined {
  if (text === undefined) {
    const Buffer = (globalThis as unknown as { Buffer?: { allocUnsafeSlow(size: number): Latin1Buffer } }).Buffer
    const out = Buffer?.allocUnsafeSlow(36)
    if (typeof out?.latin1Slice !== 'function') return undefined
    out[8] = out[13] = out[18] = out[23] = DASH
    pool = new Uint8Array(POOL_BYTES)
    text = out
  }
  if (next + 16 > POOL_BYTES) {
    if (typeof globalThis.crypto?.getRandomValues !== 'function') return undefined
    globalThis.crypto.getRandomValues(pool!)
    next = 0
  }
  const bytes = pool!
  const out = text
  const from = next
  next += 16
  let at = 0
  for (let i = 0; i < 16; i++) {
    // 8-4-4-4-12 hex digits: a dash before bytes 4, 6, 8 and 10.
    if (at === 8 || at === 13 || at === 18 || at === 23) at++
    let byte = bytes[from + i]
    if (i === 6) byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // RFC 4122 variant
    out[at++] = HEX[byte >> 4]
    out[at++] = HEX[byte & 15]
  }
  return out.latin1Slice(0, 36)
}

/** RFC 4122 version 4 UUID: pooled where there is `Buffer`, else the runtime's `crypto`. */
export function randomUUID(): string {
  const id = pooledUUID()
  if (id !== undefined) return id
  const c = globalThis.crypto as Crypto | undefined
  if (typeof c?.randomUUID === 'function') {
    try {
      return c.randomUUID()
    } catch {
      // randomUUID exists but refuses outside a secure context (a server build in an http page).
    }
  }
  const bytes = new Uint8Array(16)
  if (typeof c?.getRandomValues === 'function') c.getRandomValues(bytes)
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256)
  return formatUUID(bytes)
}
