/** A sleep on a background timer that an abort signal cuts short (rejecting with its reason). */
import { setBackgroundTimeout } from '#platform'
import type { StopSignal } from './stop.js'

export function sleep(ms: number, signal?: StopSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(handle)
      reject(signal!.reason)
    }
    const handle = setBackgroundTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort) // An abort fires once.
  })
}
