/**
 * A small typed event emitter (on/off/emit) shared by the client and the webhook destination.
 * A listener that throws never breaks delivery: the throw is logged with `console.error` (a
 * failure in the user's own listener is reported, never silent).
 * `on` and `off` refuse an event name the emitter does not know (it would never fire) and a
 * listener that is not a function (it would throw in place of what it was told, when it fires).
 */
import { closest } from '#platform'
import { ConfigError } from './errors.js'
import { expected } from './message/validate.js'

type Listener<T> = (payload: T) => void

export class Emitter<Events> {
  /** A set of listeners per known event name, made at construction. */
  readonly #listeners: Map<keyof Events, Set<Listener<never>>>

  constructor(known: ReadonlyArray<keyof Events & string>) {
    this.#listeners = new Map(known.map((event) => [event, new Set()]))
  }

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    this.#listenersOf(event, listener).add(listener as Listener<never>)
    return this
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    this.#listenersOf(event, listener).delete(listener as Listener<never>)
    return this
  }

  /** `event`'s listeners, once `event` and `listener` are found to be a known name and a function; throws `ConfigError` otherwise. */
  #listenersOf(event: keyof Events, listener: unknown): Set<Listener<never>> {
    const set = this.#listeners.get(event)
    if (!set) {
      const known = [...this.#listeners.keys()] as string[]
      const guess = closest(String(event), known)
      throw expected(ConfigError, 'event', `one of ${known.join(', ')}${guess ? ` (did you mean \`${guess}\`?)` : ''}`, event)
    }
    if (typeof listener !== 'function') throw expected(ConfigError, 'listener', 'a function', listener)
    return set
  }

  /**
   * Calls `event`'s listeners with the payload `make` gives, made once and only when there is a
   * listener (a client's `'flush'` payload is made for every batch, and most clients listen to
   * nothing); how many listeners there were.
   */
  emit<K extends keyof Events>(event: K, make: () => Events[K]): number {
    const listeners = [...this.#listeners.get(event)!]
    let payload: Events[K] | undefined
    for (const listener of listeners) {
      try {
        ;(listener as Listener<Events[K]>)((payload ??= make()))
      } catch (error) {
        console.error(`isomorphic-analytics: a '${event as string}' listener threw:`, error)
      }
    }
    return listeners.length
  }
}
