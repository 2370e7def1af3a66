/**
 * A request's one deadline for the queue server (`QUEUE_WRITE_WAIT_MS` from its arrival), when it
 * arrived while the durable collector was still starting: the wait for the start-up and the
 * write share it, so the sender has its 503 within 5 s, not after one 5 s wait and then another.
 * Attached to the request (its head, and the web `Request` made of it) without changing its type.
 */
import { mark } from './marks.js'

const deadlines = mark<object, number>()

/** `request` must have its answer by `by` (ms since the epoch). */
export const setRequestDeadline = deadlines.set
/** The deadline `setRequestDeadline` gave `request`; `undefined`: none (the queue's own 5 s). */
export const requestDeadline = deadlines.get
