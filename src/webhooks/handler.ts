/**
 * A receiver: a fetch-style `(request: Request) => Promise<Response>` for Node (via any
 * Request/Response adapter), Bun, Deno, workers and Next.js route handlers. It verifies the
 * signature over the raw bytes before parsing anything, then hands the typed payload over.
 */
import { loadExactJson, mayHoldLongInteger, parseExact } from '../message/exact-json.js'
import { refuseUnknownKeys } from '../closest.js'
import { ConfigError, type SignatureError } from '../errors.js'
import { readUpTo } from '../transport/read-stream.js'
import { describe, isPlainObject } from '../message/validate.js'
import { WEBHOOK_EVENT_TYPES, type WebhookPayload } from './payload.js'
import { describeSecret, SIGNATURE_HEADER, verifySignature } from './signature.js'
import { NATIVE, standardKeys, verifyStandardNow } from './standard.js'

/** The options of {@link createWebhookHandler}. An unknown option is a `ConfigError`. */
export interface WebhookHandlerOptions {
  /** The destination's shared secret: `X-Signature` is checked. Give it, `standardSecrets`, or both. */
  secret?: string
  /**
   * One or two `whsec_…` secrets: the Standard Webhooks headers are checked, and a request whose
   * `webhook-timestamp` is more than `toleranceSeconds` from now is refused (a replay).
   */
  standardSecrets?: readonly string[]
  /** For `standardSecrets`: seconds `webhook-timestamp` may be from now, either way. Default 300. */
  toleranceSeconds?: number
  /**
   * Called with each authentic payload. The handler answers 200 once it resolves, and 500 when it
   * throws or rejects, so the sender retries. Integers beyond ±(2^53 − 1) are `bigint`s (exact;
   * `JSON.stringify` refuses them: give `bigint` a `toJSON`, or use `lossless-json`'s stringify).
   */
  onEvent: (payload: WebhookPayload, request: Request) => void | Promise<void>
  /** Bodies larger than this many bytes are refused with 413 before verification. Default 1,000,000. */
  maxBodyBytes?: number
  /** Told when `onEvent` throws (the sender gets a 500). Default: `console.error`. */
  onError?: (error: unknown, payload: WebhookPayload) => void
}

/**
 * A fetch-style request handler, as {@link createWebhookHandler} makes it: give it to `Bun.serve`,
 * `Deno.serve`, a worker's `fetch` or a Next.js route handler.
 */
export type WebhookHandler = (request: Request) => Promise<Response>

const DEFAULT_MAX_BODY_BYTES = 1_000_000

const HANDLER_OPTIONS = new Set(['secret', 'standardSecrets', 'toleranceSeconds', 'onEvent', 'maxBodyBytes', 'onError'])

function answer(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  })
}

/** Reads at most `limit` bytes of the body; `undefined` when it is longer. */
async function readBody(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get('content-length'))
  if (Number.isFinite(declared) && declared > limit) return undefined
  if (!request.body) return new Uint8Array(0)
  const { bytes, over } = await readUpTo(request.body, limit)
  if (over) return undefined
  return bytes
}

/**
 * The body's JSON with integers kept exact: one beyond ±(2^53 − 1), which the collector forwards
 * digit for digit (an int64 ID), is a `bigint` instead of the rounded number `JSON.parse` gives
 * (`9223372036854775807` → `9223372036854776000`, silently another ID). The collector's parser
 * (a pure module, shared rather than copied): only text with a run of 16 or more digits where a
 * number may start takes the exact path, and `lossless-json` (a dependency already) is imported
 * then, on first need, so a bundle of this entry holds it as a chunk of its own.
 */
async function parseJson(text: string): Promise<unknown> {
  if (!mayHoldLongInteger(text)) return JSON.parse(text)
  await loadExactJson()
  return parseExact(text).value
}

/** Why the body could not be read: already read by something before us (our fault), or not. */
const BODY_ALREADY_READ =
  'The request body was already read before the webhook handler got it (a body parser or middleware consumed it), so its signature cannot be checked. Pass the handler the untouched Request, or a new Request built from the raw body bytes (e.g. express.raw()).'

/** A parsed body we hand to `onEvent`: an object whose `type` is one of the seven event types. */
function isPayload(value: unknown): value is WebhookPayload {
  return isPlainObject(value) && (WEBHOOK_EVENT_TYPES as readonly unknown[]).includes(value.type)
}

/**
 * Makes a fetch-style receiver for webhook deliveries: it reads the raw body, checks the signatures
 * over those exact bytes (constant-time) before parsing anything, and hands each authentic payload
 * to `onEvent`. It answers 405 for a method other than POST, 413 for a body
 * over `maxBodyBytes`, 401 for a missing or wrong `X-Signature` (with `secret`) or Standard
 * Webhooks signature, or a stale `webhook-timestamp` (with `standardSecrets`), 400 for a body that is not UTF-8
 * JSON of a webhook payload, 500 when `onEvent` throws or the body was already read (by a body
 * parser: the receiver's fault, so the sender retries), and 200 `{"ok":true}` after `onEvent`
 * resolves. Integers beyond ±(2^53 − 1) reach `onEvent` as `bigint`s, digit for digit. Error answers are JSON `{ "error": "…" }`.
 * Throws `ConfigError` for a missing, invalid or unknown option.
 *
 * @example
 * ```ts
 * import { createWebhookHandler } from 'isomorphic-analytics/webhooks'
 *
 * export const handler = createWebhookHandler({
 *   secret: process.env.WEBHOOK_SECRET!, // the destination's shared secret
 *   async onEvent(payload) {
 *     if (payload.type === 'track') console.log(`${payload.userId} did ${payload.event}`)
 *   },
 * })
 * // Bun.serve({ fetch: handler }), Deno.serve(handler), export default { fetch: handler },
 * // or in a Next.js route: export const POST = handler
 * ```
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookHandler {
  if (!isPlainObject(options)) {
    throw new ConfigError('options', `Expected the webhook handler options to be an object, got ${describe(options)}.`)
  }
  // A typo (`onerror`, `maxBodySize`) would silently keep the default.
  refuseUnknownKeys(options, HANDLER_OPTIONS, '')
  const { secret, onEvent } = options
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const keys = options.standardSecrets === undefined ? undefined : standardKeys('standardSecrets', options.standardSecrets)
  if (secret !== undefined || keys === undefined) {
    if (typeof secret !== 'string' || secret === '') {
      throw new ConfigError('secret', `Expected \`secret\` to be a non-empty string${keys === undefined ? ' (or `standardSecrets` to be given)' : ''}, got ${describeSecret(secret)}.`)
    }
  }
  const standard = { toleranceSeconds: options.toleranceSeconds ?? 300 }
  if (!Number.isSafeInteger(standard.toleranceSeconds) || standard.toleranceSeconds < 0) {
    throw new ConfigError('toleranceSeconds', `Expected \`toleranceSeconds\` to be an integer ≥ 0, got ${describe(standard.toleranceSeconds)}.`)
  }
  if (typeof onEvent !== 'function') {
    throw new ConfigError('onEvent', `Expected \`onEvent\` to be a function, got ${describe(onEvent)}.`)
  }
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 1) {
    throw new ConfigError('maxBodyBytes', `Expected \`maxBodyBytes\` to be an integer ≥ 1, got ${describe(maxBodyBytes)}.`)
  }
  const onError =
    options.onError ?? ((error: unknown) => console.error('[isomorphic-analytics] webhook onEvent failed:', error))
  if (typeof onError !== 'function') {
    throw new ConfigError('onError', `Expected \`onError\` to be a function, got ${describe(onError)}.`)
  }
  const decoder = new TextDecoder('utf-8', { fatal: true })

  return async function handleWebhook(request: Request): Promise<Response> {
    if (request.method !== 'POST') {
      return answer(405, { error: `Method ${request.method} not allowed; webhooks are POSTed.` }, { Allow: 'POST' })
    }
    // Either way the sender is not at fault, and 4xx would make it drop the message: 500 has it
    // retry, so the message arrives once the receiver is fixed.
    if (request.bodyUsed || request.body?.locked) return answer(500, { error: BODY_ALREADY_READ })
    const raw = await readBody(request, maxBodyBytes).catch(() => null)
    if (raw === null) return answer(500, { error: 'The request body could not be read (the connection failed while it arrived, or something else is reading it).' })
    if (raw === undefined) return answer(413, { error: `The body is larger than ${maxBodyBytes} bytes.` })
    if (secret !== undefined) {
      const signature = request.headers.get(SIGNATURE_HEADER)
      if (signature === null) return answer(401, { error: `Missing ${SIGNATURE_HEADER} header.` })
      if (!(await verifySignature(raw, signature, secret))) {
        return answer(401, { error: `${SIGNATURE_HEADER} does not match the body.` })
      }
    }
    if (keys !== undefined) {
      try {
        verifyStandardNow(raw, request.headers, keys, standard, NATIVE)
      } catch (error) {
        return answer(401, { error: (error as Error).message, reason: (error as SignatureError).reason })
      }
    }
    let payload: unknown
    try {
      payload = await parseJson(decoder.decode(raw))
    } catch {
      return answer(400, { error: 'The body is not valid UTF-8 JSON.' })
    }
    if (!isPayload(payload)) {
      return answer(400, {
        error: `Expected a JSON object whose \`type\` is one of ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
      })
    }
    try {
      await onEvent(payload, request)
    } catch (error) {
      // The receiver's own failure: 500 makes the sender retry. Its details stay server-side.
      try {
        onError(error, payload)
      } catch (reportError) {
        // A throwing error reporter must not turn the 500 into an unhandled rejection, nor hide
        // the failure it was given.
        console.error('isomorphic-analytics: createWebhookHandler: onError threw', reportError, 'while reporting', error)
      }
      return answer(500, { error: 'The event handler failed.' })
    }
    return answer(200, { ok: true })
  }
}
