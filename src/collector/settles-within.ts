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
