/**
 * Serialises a message once: the JSON string is what is sent, and its exact UTF-8 length decides
 * the per-message limit and how messages pack into batches.
 */
import { MessageTooLargeError, ValidationError } from '../errors.js'
import { MAX_MESSAGE_BYTES, utf8Length } from '../limits.js'

export interface Serialized {
  json: string
  bytes: number
}

export function serializeMessage(message: Record<string, unknown>, limit = MAX_MESSAGE_BYTES): Serialized {
  let json: string
  try {
    json = JSON.stringify(message)
  } catch (error) {
    throw unserialisable(message, error)
  }
  const bytes = utf8Length(json)
  if (bytes > limit) throw new MessageTooLargeError(bytes, limit)
  return { json, bytes }
}

/** Names the top-level field that cannot be serialised (circular reference, BigInt, …). */
function unserialisable(message: Record<string, unknown>, cause: unknown): ValidationError {
  let field = 'message'
  for (const key of Object.keys(message)) {
    try {
      JSON.stringify(message[key])
    } catch {
      field = key
      break
    }
  }
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new ValidationError(field, `Cannot serialise \`${field}\` to JSON: ${reason}`, { cause })
}
