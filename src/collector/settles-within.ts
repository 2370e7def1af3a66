/**
 * Whether `promise` resolves within `ms` (`false`: the time ran out first; a rejection comes
 * through). The collector's bounded waits: a drain, a readiness at start-up, an admin request's
 * queueing. The timer is a plain (ref'd) one, cleared as soon as either side wins: a bounded wait
 * keeps the process alive until it has its answer.
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)))
  try {
    return await Promise.race([promise.then(() => true as const), bound])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * `promise`'s value when it resolves within `ms` (as `{ value }`), else `undefined`; a rejection
 * comes through. For a wait whose answer is needed: a connection, a write.
 */
export async function valueWithin<T>(promise: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  let got: { value: T } | undefined
  await settlesWithin(promise.then((value) => void (got = { value })), ms)
  return got
}
