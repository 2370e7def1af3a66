/**
 * The event time of a message, by the tracking API's rules:
 * - an explicit `timestamp` is kept;
 * - else `originalTimestamp` (the device's clock when the event happened), corrected for a device
 *   clock that is wrong: `receivedAt − (sentAt − originalTimestamp)`, where `sentAt` (the
 *   device's clock when it sent the request: the message's own, else the batch's) and
 *   `originalTimestamp` come from the same clock, so their difference is exact even when that
 *   clock is an hour off;
 * - without `sentAt`, `originalTimestamp` as it is;
 * - with neither, `receivedAt`.
 */
import { describe, isValidTimestamp, timestampMs } from '../../message/validate.js'
import { badRequest } from '../http/errors.js'

function instant(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined
  if (!isValidTimestamp(value)) {
    throw badRequest('VALIDATION', `Expected \`${field}\` to be an ISO 8601 date-time, got ${describe(value)}.`, field)
  }
  return timestampMs(value)
}

/**
 * The `timestamp` to record for `message` (ISO 8601, ms, UTC, unless the client gave one).
 * `at` names the message in errors (`batch[3]`); an unreadable `originalTimestamp`, or a `sentAt`
 * that the rule needs and cannot read, is a 400 naming it.
 */
export function eventTime(
  message: Record<string, unknown>,
  batchSentAt: unknown,
  receivedAt: string,
  at: string,
): unknown {
  if (message.timestamp !== undefined) return message.timestamp
  const field = (name: string) => (at === '' ? name : `${at}.${name}`)
  const original = instant(message.originalTimestamp, field('originalTimestamp'))
  if (original === undefined) return receivedAt
  const sentAt =
    message.sentAt !== undefined ? instant(message.sentAt, field('sentAt')) : instant(batchSentAt, 'sentAt')
  if (sentAt === undefined) return new Date(original).toISOString()
  return new Date(Date.parse(receivedAt) - (sentAt - original)).toISOString()
}
