/**
 * Reads a byte stream up to a limit, for bodies whose size the reader must bound: a refusal's
 * reason (the first bytes are enough) and a webhook body (over the limit is refused). Past the
 * limit the stream is cancelled, so the rest is neither read nor held.
 */

/** At most `limit` bytes of `stream`, joined; `over`: it held more (and was cancelled). */
export async function readUpTo(stream: ReadableStream<Uint8Array>, limit: number): Promise<{ bytes: Uint8Array<ArrayBuffer>; over: boolean }> {
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  let over = false
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size))
      size = limit
      over = true
      await reader.cancel().catch(() => {})
      break
    }
    chunks.push(value)
    size += value.byteLength
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return { bytes, over }
}

/**
 * Reads and discards a success's body so the connection can be reused; never throws. Nothing of it
 * is kept: it is read chunk by chunk for at most `timeoutMs` (the request's time limit) after its
 * headers, then cancelled (`setTimer` arms that limit), so an answer that streams for ever holds
 * neither memory nor the connection. An answer without a `body` stream (`nodeRequest`'s) is
 * drained by its transport, under its own time limit: nothing to release, and no copy of its
 * bytes is made. (The browser build reads it whole instead: ../platform/browser.ts.)
 */
export async function drainBody(response: { readonly body?: ReadableStream<Uint8Array> | null }, timeoutMs: number, setTimer: (callback: () => void, ms: number) => ReturnType<typeof setTimeout>): Promise<void> {
  if (!response.body) return
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const reader = response.body.getReader()
    timer = setTimer(() => void reader.cancel().catch(() => {}), timeoutMs)
    while (!(await reader.read()).done) {
      // Each chunk is dropped as it comes.
    }
  } catch {
    // Cut short (an error, a stream already read): the status is all we need.
  } finally {
    clearTimeout(timer)
  }
}
