/**
 * When a fetch-style handler can serve without making its first requests wait: the collector's
 * own handler is ready once its queue server is connected and its saved settings are applied. A
 * server adapter (`startServer`) starts listening only then, so the start-up is not paid by the
 * first senders (and a load balancer sees the port once it serves). Other handlers are ready at once.
 */
const readiness = new WeakMap<object, Promise<void>>()

/** `handler` serves without waiting once `ready` resolves (it never rejects). */
export function markReadiness<T extends object>(handler: T, ready: Promise<void>): T {
  readiness.set(handler, ready)
  return handler
}

/** What `markReadiness` gave for `handler`; `undefined`: ready at once. */
export function readinessOf(handler: object): Promise<void> | undefined {
  return readiness.get(handler)
}
