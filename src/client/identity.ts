/**
 * Option `identity` (browser pages and workers by default): who is using the page, kept for the
 * calls that do not say. An `anonymousId` is made once and kept (in `localStorage`, a cookie, or
 * memory); `identify()` remembers its `userId`; calls without ids get both; `reset()` forgets
 * them. Each read goes to the storage, so another tab's `identify()` or `reset()` applies here too.
 */
import { ConfigError } from '../errors.js'
import { expected, isPlainObject } from '../message/validate.js'
import { identityStore, randomUUID, refuseUnknownKeys, type KeyStore } from '#platform'

/** Where the ids are kept: `'none'` keeps nothing and makes no anonymous id (before consent). */
export type IdentityStorage = 'localStorage' | 'cookie' | 'memory' | 'none'

/** Option `identity`. */
export interface IdentityOptions {
  /** Default `'localStorage'` (in a browser worker, which has none: `'memory'`). */
  storage?: IdentityStorage
}

const STORAGES: readonly IdentityStorage[] = ['localStorage', 'cookie', 'memory', 'none']

/** The storage keys (and cookie names). */
export const ANONYMOUS_ID_KEY = 'isomorphic-analytics.anonymousId'
export const USER_ID_KEY = 'isomorphic-analytics.userId'

/**
 * Option `identity` resolved: the storage, or undefined for none (calls must then name their user,
 * as the Go library's do). `onPage`: the platform's default applies (a page or a browser worker).
 */
export function identityStorage(value: unknown, onPage: boolean): IdentityStorage | undefined {
  if (value === undefined) return onPage ? 'localStorage' : undefined
  if (value === false) return undefined
  if (!isPlainObject(value)) throw expected(ConfigError, 'identity', 'an object like `{ storage: \'localStorage\' }`, or false', value)
  refuseUnknownKeys(value, new Set(['storage']), 'identity')
  const { storage = 'localStorage' } = value as IdentityOptions
  if (!STORAGES.includes(storage)) throw expected(ConfigError, 'identity.storage', `one of ${STORAGES.map((s) => `'${s}'`).join(', ')}`, storage)
  return storage
}

/** A store in memory (`'memory'`, and where the storage asked for refuses). */
function memoryStore(): KeyStore {
  const kept = new Map<string, string>()
  return {
    getItem: (key) => kept.get(key) ?? null,
    setItem: (key, value) => void kept.set(key, value),
    removeItem: (key) => void kept.delete(key),
  }
}

/** The ids a client fills in, from where option `identity` keeps them. */
export class Identity {
  #store: KeyStore
  readonly #anonymous: boolean
  /**
   * The storage needs a page and there is none (a server rendering a page's code, as Next.js does
   * with a client component): calls are built, and not sent; the browser makes them again.
   */
  readonly elsewhere: boolean

  constructor(storage: IdentityStorage) {
    const store = storage === 'localStorage' || storage === 'cookie' ? identityStore(storage) : 'memory'
    this.elsewhere = !store
    this.#store = typeof store === 'object' ? store : memoryStore()
    this.#anonymous = storage !== 'none'
  }

  /** `op` on the store; where the storage refuses (blocked, full, a sandboxed frame), on memory from then on. */
  #use<T>(op: (store: KeyStore) => T): T {
    try {
      return op(this.#store)
    } catch {
      return op((this.#store = memoryStore()))
    }
  }

  /** `input` with the kept `userId` and `anonymousId` where it has none (a new object). */
  fill(input: Record<string, unknown>): Record<string, unknown> {
    return { ...input, userId: input.userId ?? this.#read(USER_ID_KEY), anonymousId: input.anonymousId ?? this.anonymousId() }
  }

  /** The kept anonymous id, made and kept on first use; undefined with storage `'none'`. */
  anonymousId(): string | undefined {
    if (!this.#anonymous) return undefined
    let id = this.#read(ANONYMOUS_ID_KEY)
    if (!id) this.#use((store) => store.setItem(ANONYMOUS_ID_KEY, (id = randomUUID())))
    return id
  }

  /** `identify()` named the user: later calls carry this `userId`. */
  remember(userId: unknown): void {
    if (typeof userId === 'string' && userId) this.#use((store) => store.setItem(USER_ID_KEY, userId))
  }

  /** Forgets the user and the anonymous id (a new one is made on the next call). */
  reset(): void {
    this.#use((store) => {
      store.removeItem(USER_ID_KEY)
      store.removeItem(ANONYMOUS_ID_KEY)
    })
  }

  /** A kept id; undefined when there is none (or it is empty). */
  #read(key: string): string | undefined {
    return this.#use((store) => store.getItem(key)) || undefined
  }
}
