/**
 * The first KB of a receiver's answer, as an attempt reports it (`UrlResult.answer`): what an
 * operator needs to see why a receiver refused a message, or what it said when it took it. At
 * most `ANSWER_BYTES` are kept, decoded as UTF-8 (a character cut at the end is replaced).
 */
import { setBackgroundTimeout } from '#platform'
import type { HttpAnswer } from '../transport/types.js'

/** Bytes of an answer's body an attempt keeps. */
export const ANSWER_BYTES = 1_024

const decoder = new TextDecoder()
const encoder = new TextEncoder()

/** `text` cut to its first `ANSWER_BYTES` UTF-8 bytes (encoded only when it may be longer). */
export function firstBytesOf(text: string): string {
  if (text.length * 3 <= ANSWER_BYTES) return text
  const bytes = encoder.encode(text)
  return bytes.length <= ANSWER_BYTES ? text : decoder.decode(bytes.subarray(0, ANSWER_BYTES))
}

/**
 * A success's first KB: read from its stream until that much came or the body ended, within
 * `timeoutMs`; the rest is read and dropped in the background under the same bound, so the
 * connection can be reused and an answer that streams for ever holds neither memory nor the
 * attempt. An answer without a stream (`nodeRequest`'s, which keeps 16 KiB at most) is read with
 * `text()`. Never throws: an answer cut short keeps what came (`''` when nothing did).
 */
export async function readAnswer(response: HttpAnswer, timeoutMs: number): Promise<string> {
  if (!response.body) return answerText(response)
  let reader: ReadableStreamDefaultReader<Uint8Array>
  try {
    reader = response.body.getReader()
  } catch {
    return ''
  }
  const timer = setBackgroundTimeout(() => void reader.cancel().catch(() => {}), timeoutMs)
  const chunks: Uint8Array[] = []
  let size = 0
  let done = false
  try {
    while (size < ANSWER_BYTES) {
      const chunk = await reader.read()
      if (chunk.done) {
        done = true
        break
      }
      chunks.push(chunk.value)
      size += chunk.value.byteLength
    }
  } catch {
    done = true
  }
  if (done) clearTimeout(timer)
  else void drain(reader).finally(() => clearTimeout(timer))
  const bytes = new Uint8Array(Math.min(size, ANSWER_BYTES))
  let offset = 0
  for (const chunk of chunks) {
    const part = chunk.subarray(0, bytes.length - offset)
    bytes.set(part, offset)
    offset += part.byteLength
  }
  return decoder.decode(bytes)
}

/**
 * An answer's first KB through `text()` (a refusal's, which the attempt has read already, or an
 * answer without a stream); `''` where there is none: a `fetch` of the user's may resolve with
 * any object that has a `status` and `headers.get`.
 */
export async function answerText(response: HttpAnswer): Promise<string> {
  try {
    return typeof response.text === 'function' ? firstBytesOf(await response.text()) : ''
  } catch {
    return ''
  }
}

/** Reads and drops the rest of a body (cut off by the caller's timer); never throws. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  try {
    while (!(await reader.read()).done) {
      // Each chunk is dropped as it comes.
    }
  } catch {
    // Cut short: nothing more is needed of it.
  }
}
