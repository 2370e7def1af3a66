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
  const sentAtField = message.sentAt !== undefined ? field('sentAt') : 'sentAt'
  const sentAt = message.sentAt !== undefined ? instant(message.sentAt, sentAtField) : instant(batchSentAt, sentAtField)
  const ms = sentAt === undefined ? original : Date.parse(receivedAt) - (sentAt - original)
  // A time a four-digit year cannot write (`9999-12-31T23:00:00-02:00` is in the year 10000, and
  // so is a corrected one far off): refused here, naming what gave it, not left to fail later.
  if (!(ms >= FIRST_MS && ms <= LAST_MS)) {
    const from = sentAt === undefined ? `\`${field('originalTimestamp')}\`` : `\`${field('originalTimestamp')}\` corrected by \`${sentAtField}\``
    throw badRequest('VALIDATION', `Expected ${from} to give a time in the years 0000 to 9999.`, field('originalTimestamp'))
  }
  return new Date(ms).toISOString()
}

/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: what ISO 8601 writes with four digits. */
const FIRST_MS = -62_167_219_200_000
const LAST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
