/**
 * A small typed event emitter (on/off/emit) shared by the client and the webhook destination.
 * A listener that throws never breaks delivery: the throw is handed to `onListenerError`, by
 * default `console.error` (a failure in the user's own listener is reported, never silent).
 */

type Listener<T> = (payload: T) => void

export class Emitter<Events> {
  #listeners = new Map<keyof Events, Set<Listener<never>>>()
  readonly #onListenerError: (error: unknown, event: string) => void

  constructor(onListenerError = (error: unknown, event: string) => console.error(`isomorphic-analytics: a '${event}' listener threw:`, error)) {
    this.#onListenerError = onListenerError
  }

  on<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    let set = this.#listeners.get(event)
    if (!set) this.#listeners.set(event, (set = new Set()))
    set.add(listener as Listener<never>)
    return this
  }

  off<K extends keyof Events>(event: K, listener: Listener<Events[K]>): this {
    this.#listeners.get(event)?.delete(listener as Listener<never>)
    return this
  }

  listenerCount(event: keyof Events): number {
    return this.#listeners.get(event)?.size ?? 0
  }

  emit<K extends keyof Events>(event: K, payload: Events[K]): void {
    const set = this.#listeners.get(event)
    if (!set) return
    for (const listener of [...set]) {
      try {
        ;(listener as Listener<Events[K]>)(payload)
      } catch (error) {
        this.#onListenerError(error, String(event))
      }
    }
  }
}
