/**
 * The exact body a delivery sends, checked before anything is signed or sent: `deliver`'s payload
 * serialised once, or `deliverSerialized`'s text as given. Each throws the `ValidationError` the
 * delivery then resolves with (`delivered: false`, nothing sent).
 */
import { ValidationError, messageOf } from '../errors.js'
import { describe } from '../message/validate.js'

/** The payload's JSON text, or a `ValidationError` naming `payload` when it is no object or has no JSON. */
export function jsonOf(payload: object): string {
  // `null`, a string or a number would be posted as is (`null`, `"str"`, `5`): no receiver's payload.
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new ValidationError('payload', `Expected the payload to be an object (a webhook payload), got ${describe(payload)}.`)
  }
  try {
    const json: unknown = JSON.stringify(payload)
    if (typeof json !== 'string') throw new TypeError('JSON.stringify returned nothing')
    return json
  } catch (cause) {
    const reason = messageOf(cause)
    throw new ValidationError('payload', `Expected the payload to serialise to JSON: ${reason}.`, { cause })
  }
}

/** `deliverSerialized`'s body as given; anything but a string (bytes, an object) is a `ValidationError`. */
export function givenBody(body: unknown): string {
  if (typeof body === 'string') return body
  throw new ValidationError('body', `Expected \`body\` to be the payload's JSON text (a string), got ${describe(body)}.`)
}
