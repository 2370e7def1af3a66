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
