/**
 * Reads a request body as UTF-8 text with a running byte count, refusing it (413) as soon as it
 * passes the limit, without buffering more. `Content-Encoding: gzip` (and `deflate`) bodies are
 * inflated through `DecompressionStream` and the limit applies to the inflated size, so a gzip
 * bomb is refused after `limit` bytes of output, never inflated whole. Invalid UTF-8 is a 400.
 */
import { INGEST_MAX_BODY_BYTES } from '../../limits.js'
import { messageOf } from '../../errors.js'
import { HttpProblem, badRequest, payloadTooLarge } from './errors.js'
import { heldRequestBody, type RequestHead } from './direct.js'

type Encoding = 'identity' | 'gzip' | 'deflate'

function contentEncoding(request: RequestHead): Encoding {
  const header = (request.headers.get('content-encoding') ?? '').trim().toLowerCase()
  if (header === '' || header === 'identity') return 'identity'
  if (header === 'gzip' || header === 'x-gzip') return 'gzip'
  if (header === 'deflate') return 'deflate'
  throw new HttpProblem(
    415,
    'UNSUPPORTED_MEDIA_TYPE',
    `Content-Encoding ${JSON.stringify(header)} is not supported; send identity, gzip or deflate.`,
  )
}

/** A pass-through stream that errors with a 413 once more than `limit` bytes have gone by. */
function countingStream(limit: number, what: string): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0
  return new TransformStream({
    transform(chunk, controller) {
      seen += chunk.byteLength
      if (seen > limit) controller.error(payloadTooLarge(limit, what))
      else controller.enqueue(chunk)
    },
  })
}

function inflate(body: ReadableStream<Uint8Array>, encoding: 'gzip' | 'deflate', limit: number) {
  if (typeof DecompressionStream !== 'function') {
    throw new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', `This runtime cannot decompress ${encoding} bodies.`)
  }
  return body
    // The limit holds before decompression too (API.md): a body within it compresses to less,
    // short of text no compressor can shrink (which grows by a few bytes per 64 KiB).
    .pipeThrough(countingStream(limit, 'Compressed request body'))
    .pipeThrough(new DecompressionStream(encoding) as unknown as TransformStream<Uint8Array, Uint8Array>)
}

export async function readBodyText(request: RequestHead, limit: number = INGEST_MAX_BODY_BYTES): Promise<string> {
  const encoding = contentEncoding(request)
  const declared = Number(request.headers.get('content-length'))
  if (encoding === 'identity' && Number.isFinite(declared) && declared > limit) {
    discard(request.body)
    throw payloadTooLarge(limit)
  }
  const held = heldRequestBody(request)
  if (held !== undefined && encoding === 'identity') {
    if (held.byteLength > limit) throw payloadTooLarge(limit)
    return decodeUtf8(WHOLE, held)
  }
  const body = held === undefined ? request.body : (new Blob([held as Uint8Array<ArrayBuffer>]).stream() as ReadableStream<Uint8Array>)
  if (body === null) return ''
  const stream = encoding === 'identity' ? body : inflate(body, encoding, limit)
  const reader = stream.getReader()
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let total = 0
  let text = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      if (total > limit) throw payloadTooLarge(limit, encoding === 'identity' ? 'Request body' : 'Decompressed request body')
      text += decodeUtf8(decoder, value, STREAM)
    }
    return text + decodeUtf8(decoder)
  } catch (error) {
    reader.cancel(error).catch(() => {})
    throw asProblem(error, encoding)
  }
}

/** Decodes a whole body in one call (no state kept between calls). */
const WHOLE = new TextDecoder('utf-8', { fatal: true })
/** A chunk of a body read as a stream: the decoder keeps a sequence cut between chunks. */
const STREAM = { stream: true }

/**
 * `decoder.decode(chunk, options)`, whose `fatal` TypeError on the first invalid sequence becomes a
 * 400 (a stream's end: no `chunk`, no `options`).
 */
function decodeUtf8(decoder: TextDecoder, chunk?: Uint8Array, options?: TextDecodeOptions): string {
  try {
    return decoder.decode(chunk, options)
  } catch (error) {
    throw new HttpProblem(400, 'INVALID_ENCODING', 'Request body is not valid UTF-8.', { cause: error })
  }
}

function asProblem(error: unknown, encoding: Encoding): HttpProblem {
  if (error instanceof HttpProblem) return error
  if (encoding !== 'identity') {
    return badRequest('INVALID_ENCODING', `Request body is not valid ${encoding} data.`)
  }
  return badRequest('BAD_REQUEST', `Could not read the request body: ${messageOf(error)}`)
}

function discard(body: ReadableStream<Uint8Array> | null): void {
  body?.cancel().catch(() => {})
}
