/**
 * The platform seam: everything that differs between the runtimes the client runs in, behind one
 * interface. Shared code imports the platform as `#platform` (package.json `imports`), which the
 * build resolves by the same export conditions as the package's entries, once:
 * - `browser` → ./browser.ts (`dist/index.browser.js`, the `<script>` file): pages and browser
 *   workers, within the browser budget;
 * - `worker`, `workerd`, `edge-light` → ./worker.ts (`dist/index.worker.js`): web-standard
 *   runtimes without a page (Cloudflare Workers, Vercel Edge, Netlify Edge);
 * - anything else → ./server.ts (`dist/index.js`): Node, Bun and Deno (and the webhooks, the
 *   collector and the testing kit everywhere).
 * So no shared module checks which runtime it is in, and the browser build lacks Node code because
 * nothing it imports reaches it. This file declares the seam (TypeScript reads it for `#platform`);
 * test/platform/seam.test-d.ts checks each implementation against it.
 *
 * Named exports (not an object): the bundler inlines and renames them, and a build keeps only
 * those it uses. The browser build's explanations and shortcuts are plainer ones, for its budget.
 */
import type { MessageType } from '../message/types.js'
import type { MessageQueue } from '../queue/message-queue.js'
import type { QueueChoice } from '../queue/message-queue.js'
import type { Recover } from '../queue/persisted-queue.js'
import type { Spill } from './spill.js'
import type { StopSignal } from '../transport/stop.js'
import type { HttpAnswer, Transport } from '../transport/types.js'
import type { KeyStore } from './web.js'

export type { KeyStore }

export type TimerHandle = ReturnType<typeof setTimeout>

/** A server runtime's process: its exit hooks (see ./process-hooks.ts) and the spill at exit. */
export interface ProcessHooks {
  /**
   * Calls `handler(owner)` when the process is about to exit on its own with nothing left to do,
   * unless `owner` was collected. Work it starts keeps the process running. Returns the
   * unsubscribe function. `handler` must not hold `owner` itself (it receives it).
   */
  onIdleExit<T extends object>(owner: T, handler: (owner: T) => void): () => void
  /** Calls `handler(owner)` (synchronous) as the process exits, whatever the cause that lets code run. */
  onExit<T extends object>(owner: T, handler: (owner: T) => void): () => void
  /** Whether the process has begun to exit on its own (`onIdleExit`'s hooks ran). */
  exiting(): boolean
  /** Option `spill`: `dir` made absolute. */
  spillDir(dir: string): string
  /** The spill directory `dir` of `writeKey`'s clients; throws where it cannot be used. */
  openSpill(dir: string, writeKey: string): Spill
}

// What each implementation exports (a type test checks each against these declarations).

/** The transport used when no `fetch` option is given. */
export declare function defaultTransport(): Transport
/** The queue a client holds its messages in (../queue/). */
export declare function createQueue(choice: QueueChoice, recover: Recover): MessageQueue
export declare function randomUUID(): string
/** Exact UTF-8 byte length of `text`. */
export declare function utf8ByteLength(text: string): number
/** The `DEBUG` setting: the environment variable on servers, `localStorage.debug` in browsers. */
export declare function readDebugSetting(): string | undefined
/** Where requests are subject to CORS (a page or a browser worker): the client's defaults differ. */
export declare function isBrowserLike(): boolean
/** Whether option `persist` defaults to on (a page with storage and Web Locks). */
export declare function canPersist(): boolean
/** Calls `handler` when a browser page is hidden or unloaded. Returns the unsubscribe function. */
export declare function onPageHide(handler: () => void): () => void
/** `setTimeout` that never keeps a process alive (looks the global up at call time, for fake timers). */
export declare function setBackgroundTimeout(callback: () => void, ms: number): TimerHandle
/** Keeps a server runtime's process alive until the returned function is called. */
export declare function holdProcess(): () => void
/** One abort signal for all of a client's deliveries. */
export declare function createStop(): { readonly signal: StopSignal; abort(reason?: unknown): void }
/** A debug line's sink: the console's error stream on servers, `console.debug` in browsers. */
export declare function logSink(line: string): void
/**
 * Where option `identity` keeps its ids: the page's `localStorage` or cookies; `'memory'` in a
 * browser worker; undefined where there is no page (a server rendering a page's code).
 */
export declare function identityStore(kind: 'localStorage' | 'cookie'): KeyStore | 'memory' | undefined
/** A server runtime's process hooks and spill; `undefined` in pages and workers. */
export declare const processHooks: ProcessHooks | undefined

// Explanations and shortcuts: the browser build's are plainer, for size (it works the same).
/** The known name most likely meant by `typed` (for "did you mean"; the browser's: none). */
export declare function closest(typed: string, known: readonly string[]): string | undefined
/** Throws for the first key of `object` not in `known`, named with a guess and every known key (the browser's: the key). */
export declare function refuseUnknownKeys(object: object, known: ReadonlySet<string>, at: string, synonyms?: Readonly<Record<string, string>>): void
/** What the missing-write-key error adds: how to build without one (the browser's: nothing). */
export declare const missingKeyHint: string
/** Other libraries' names for the client's options, for the unknown-option error's guess (the browser's: none). */
export declare const peerOptions: Readonly<Record<string, string>> | undefined
/** How a debug line writes a detail (the browser's: none; the client passes none). */
export declare const formatDetail: ((value: unknown) => string) | undefined
/** ` (did you mean …?)` for an endpoint given as a host and port without a scheme (the browser's: `''`). */
export declare function endpointGuess(value: unknown): string
/** A fast yes for a well-formed message; the full check runs on a no (the browser's: always no). */
export declare function quickCheck(type: MessageType, message: Record<string, unknown>): boolean
/** The error for a request that got no answer, naming the system error (the browser's: its message). */
export declare function transportFailure(url: string, error: unknown): Error
/** The first 16 KB of a refusal's body, read from its stream (the browser's: read whole, then cut). */
export declare function readCapped(response: HttpAnswer): Promise<string>
/** Reads and drops a success's body within `timeoutMs` (the browser's: read whole). */
export declare function discardBody(response: HttpAnswer, timeoutMs: number): Promise<void>
