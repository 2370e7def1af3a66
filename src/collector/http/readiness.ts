/**
 * When a fetch-style handler can serve without making its first requests wait: the collector's
 * own handler is ready once its queue server is connected and its saved settings are applied. A
 * server adapter (`startServer`) starts listening only then, so the start-up is not paid by the
 * first senders (and a load balancer sees the port once it serves). Other handlers are ready at once.
 */
import { mark } from './marks.js'

const readiness = mark<object, Promise<void>>()

/** `handler` serves without waiting once `ready` resolves (it never rejects). */
export const markReadiness = readiness.set
/** What `markReadiness` gave for `handler`; `undefined`: ready at once. */
export const readinessOf = readiness.get
