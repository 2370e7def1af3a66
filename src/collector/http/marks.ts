/**
 * What the collector tells a server adapter about its own objects without changing their types
 * (a `Request`, the fetch handler): a value attached to an object, held in a `WeakMap`.
 */
export interface Mark<K extends object, V> {
  /** Attaches `value` to `key`; returns `key`. */
  set<T extends K>(key: T, value: V): T
  /** What was attached to `key`, if anything. */
  get(key: K): V | undefined
}

export function mark<K extends object, V>(): Mark<K, V> {
  const values = new WeakMap<K, V>()
  return {
    set(key, value) {
      values.set(key, value)
      return key
    },
    get: (key) => values.get(key),
  }
}
