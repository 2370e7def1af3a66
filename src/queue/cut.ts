/** How a queue cuts taken messages into batches: `flushAt` messages, and the body limit in bytes. */
import { MAX_BATCH_BYTES } from '../limits.js'

/**
 * Splits `messages` in order into runs of at most `maxCount` messages whose bodies (`overhead`,
 * the envelope's bytes, plus each message's `bytes` and a comma between two) are at most
 * `maxBodyBytes`.
 */
export function cut<T extends { readonly bytes: number }>(messages: readonly T[], maxCount: number, overhead: number, maxBodyBytes: number = MAX_BATCH_BYTES): T[][] {
  const batches: T[][] = []
  let current: T[] = []
  // Its messages' bytes and the comma after each: one more makes a body of `overhead + bytes + its bytes`.
  let bytes = 0
  for (const item of messages) {
    if (current.length && (current.length >= maxCount || overhead + bytes + item.bytes > maxBodyBytes)) {
      batches.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += item.bytes + 1
  }
  if (current.length) batches.push(current)
  return batches
}
