/**
 * Audience and computed-trait delivery (seed §6): membership changes become identify payloads
 * whose one trait is the snake_case of the audience name, `true` for a member, `false` for a
 * former member.
 */
import { ValidationError } from '../errors.js'
import { describe, isValidTimestamp } from '../message/validate.js'
import { randomUUID } from '#platform'
import type { JsonObject } from '../message/types.js'
import { toIso, type IdentifyWebhookPayload } from './payload.js'

/**
 * Lower-case letters that Unicode does not decompose into a base letter plus marks, spelled in
 * ASCII as German, Danish, Polish, Icelandic and Turkish writers do (the set lodash's `deburr`
 * covers). Applied after lower-casing, so `Æ` and `ẞ` are covered too.
 */
const TRANSLITERATIONS: Record<string, string> = {
  ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', þ: 'th', ł: 'l', ı: 'i', ħ: 'h', ŧ: 't',
  ŋ: 'ng', ĸ: 'k',
}
const TRANSLITERABLE = new RegExp(`[${Object.keys(TRANSLITERATIONS).join('')}]`, 'gu')

/**
 * The diacritics of a Latin or Greek letter once decomposed: the Combining Diacritical Marks
 * (and their Extended and Supplement blocks) that follow it. Only these are removed: the marks of
 * other scripts are part of their letters (kana's voicing, Indic vowel signs, Cyrillic `й`).
 */
const LATIN_GREEK_DIACRITICS = /([\p{sc=Latin}\p{sc=Greek}])[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff]+/gu

/**
 * The trait name for an audience, defined as:
 *
 * 1. Unicode NFKD, then the diacritics of Latin and Greek letters removed (`Café` → `Cafe`), then
 *    NFC: compatibility forms fold (`ﬁ` → `fi`, full-width `Ａ` → `A`), and every other script
 *    comes back composed as given (`ガイド`, `हिंदी`, `고객`). Marks on no letter (an emoji's
 *    variation selector, a keycap) go.
 * 2. Apostrophes (', ’, ʼ) are dropped (`Women's` → `Womens`).
 * 3. Word boundaries become `_`: lower case or digit followed by upper case (`highValue`,
 *    `Top10Users`), and the end of an acronym (`VIPUsers` → `VIP_Users`). A letter followed by a
 *    digit is not a boundary (`Q4` stays `q4`).
 * 4. Lower case (locale-independent).
 * 5. Letters with no decomposition are transliterated: `ß` → `ss`, `æ` → `ae`, `ø` → `o`,
 *    `ł` → `l`, `þ` → `th`, `ı` → `i`…
 * 6. Every run of characters that are neither letters (with their marks) nor digits (spaces,
 *    dashes, dots, emoji, punctuation) becomes one `_`; leading and trailing `_` are trimmed.
 *
 * Letters of other scripts are kept, lower-cased where the script has case (`Ελληνικά` →
 * `ελληνικα`; `高价值用户` stays as it is). The result is `''` when the name has no letter or
 * digit; `audienceSync` refuses such a name.
 */
export function snakeCase(name: string): string {
  return name
    .normalize('NFKD')
    .replace(LATIN_GREEK_DIACRITICS, '$1')
    .normalize('NFC')
    // Marks on no letter go (a capture, not a lookbehind: Safari before 16.4 cannot parse one).
    .replace(/(^|[^\p{L}\p{M}])\p{M}+/gu, '$1')
    .replace(/['’ʼ]/g, '')
    .replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1_$2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1_$2')
    .toLowerCase()
    .replace(TRANSLITERABLE, (letter) => TRANSLITERATIONS[letter])
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
}

/** The options of {@link audienceSync}. */
export interface AudienceSyncOptions {
  /** The payloads' timestamp. Default: now. */
  timestamp?: Date | string
  /** The payloads' context. Default `{}`. */
  context?: JsonObject
}

/**
 * The members as a set of user ids. Only `previousMembers` may be missing (a first sync): a missing
 * `currentMembers` would make every previous member a leaver without a word.
 */
function memberSet(field: string, members: Iterable<string> | null | undefined, optional = false): Set<string> {
  if (members == null && optional) return new Set()
  if (members == null || typeof members === 'string' || typeof (members as Iterable<string>)[Symbol.iterator] !== 'function') {
    throw new ValidationError(field, `Expected \`${field}\` to be an iterable of user ids (an array or a Set), got ${describe(members)}.`)
  }
  const set = new Set<string>()
  for (const userId of members) {
    if (typeof userId !== 'string' || userId.trim() === '') {
      throw new ValidationError(field, `Expected every user id in \`${field}\` to be a non-empty string (not only whitespace), got ${describe(userId)}.`)
    }
    set.add(userId)
  }
  return set
}

/**
 * The identify payloads one sync of an audience sends: for each user who joined, the trait
 * `snakeCase(audienceName)` set to `true`; for each user who left, `false`; nobody else. On the
 * first sync `previousMembers` is empty (or omitted), so every current member gets `true`.
 * Joiners come first, in the order of `currentMembers`, then leavers, in the order of
 * `previousMembers`. Each payload has its own `messageId`.
 *
 * Throws `ValidationError` when the audience name has no letter or digit, `currentMembers` is
 * missing or not an iterable, or a member is not a non-empty string.
 */
export function audienceSync(
  audienceName: string,
  previousMembers: Iterable<string> | null | undefined,
  currentMembers: Iterable<string>,
  options: AudienceSyncOptions = {},
): IdentifyWebhookPayload[] {
  if (typeof audienceName !== 'string') {
    throw new ValidationError('audienceName', `Expected \`audienceName\` to be a string, got ${describe(audienceName)}.`)
  }
  const trait = snakeCase(audienceName)
  if (trait === '') {
    throw new ValidationError('audienceName', `Expected \`audienceName\` to contain a letter or a digit, got ${describe(audienceName)}.`)
  }
  const previous = memberSet('previousMembers', previousMembers, true)
  const current = memberSet('currentMembers', currentMembers)
  // What `toWebhookPayload` accepts, read the same way (`new Date(text)` would take '5' or
  // 'March 7', and read an ISO date-time without an offset in the local time zone, not UTC).
  if (options.timestamp !== undefined && !isValidTimestamp(options.timestamp)) {
    throw new ValidationError('timestamp', `Expected \`timestamp\` to be a valid Date or ISO 8601 string, got ${describe(options.timestamp)}.`)
  }
  const iso = toIso(options.timestamp)
  const context = options.context ?? {}
  const payload = (userId: string, member: boolean): IdentifyWebhookPayload => ({
    version: 1,
    type: 'identify',
    messageId: randomUUID(),
    userId,
    traits: { [trait]: member },
    timestamp: iso,
    context,
  })
  const payloads: IdentifyWebhookPayload[] = []
  for (const userId of current) if (!previous.has(userId)) payloads.push(payload(userId, true))
  for (const userId of previous) if (!current.has(userId)) payloads.push(payload(userId, false))
  return payloads
}
