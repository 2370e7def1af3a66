import { describe, expect, it } from 'vitest'
import { audienceSync, isValidationError, snakeCase, toWebhookPayload } from '../../src/webhooks/index.js'

describe('snakeCase', () => {
  const cases: Array<[string, string]> = [
    // spaces, dashes, other separators
    ['High Value Users', 'high_value_users'],
    ['VIP-Customers 2024', 'vip_customers_2024'],
    ['  churn   risk -- q4  ', 'churn_risk_q4'],
    ['already_snake_case', 'already_snake_case'],
    ['__leading and trailing__', 'leading_and_trailing'],
    ['dots.and/slashes+plus', 'dots_and_slashes_plus'],
    // camelCase, PascalCase, acronyms, digits
    ['HighValueUsers', 'high_value_users'],
    ['highValueUsers', 'high_value_users'],
    ['VIPUsers', 'vip_users'],
    ['usersVIP', 'users_vip'],
    ['HTTPServerErrors', 'http_server_errors'],
    ['Top10Users', 'top10_users'],
    ['Q4 2024', 'q4_2024'],
    ["Women's Shoes", 'womens_shoes'],
    ['Women’s Shoes', 'womens_shoes'],
    // diacritics stripped through NFKD; letters without a decomposition transliterated
    ['Café Lovers', 'cafe_lovers'],
    ['Crème Brûlée Fans', 'creme_brulee_fans'],
    ['Größe Kunden', 'grosse_kunden'],
    ['Ærøskøbing Ølbryggere', 'aeroskobing_olbryggere'],
    ['Łódź Shoppers', 'lodz_shoppers'],
    ['ÆRØ Fans', 'aero_fans'],
    ['GROẞE Kunden', 'grosse_kunden'],
    ['İstanbul ışık', 'istanbul_isik'],
    ['ﬁnance ＶＩＰ', 'finance_vip'],
    // other scripts kept (lower-cased where they have case), emoji are separators
    ['Ελληνικά Πελάτες', 'ελληνικα_πελατες'],
    ['高价值用户', '高价值用户'],
    ['VIP 高价值 Users', 'vip_高价值_users'],
    ['🔥 Hot Leads 🔥', 'hot_leads'],
    ['Москва Users', 'москва_users'],
    // other scripts' marks are part of their letters: kept, and recomposed (NFC) as given
    ['ガイド', 'ガイド'],
    ['プレミアム Users', 'プレミアム_users'],
    ['ｶﾞｲﾄﾞ', 'ガイド'],
    ['हिंदी ग्राहक', 'हिंदी_ग्राहक'],
    ['தமிழ் Users', 'தமிழ்_users'],
    ['고객 VIP', '고객_vip'],
    ['Новый Йогурт', 'новый_йогурт'],
    // marks on no letter (variation selector, keycap) go with their emoji or beside their digit
    ['Top1️⃣Users', 'top1_users'],
    ['❤️ Fans', 'fans'],
  ]
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      expect(snakeCase(input)).toBe(expected)
    })
  }

  it('is idempotent', () => {
    for (const [input] of cases) expect(snakeCase(snakeCase(input))).toBe(snakeCase(input))
  })

  it('keeps names of other scripts apart: no two of these give one trait', () => {
    const pairs = [['ガイド', 'カイト'], ['プレミアム', 'フレミアム'], ['हिंदी', 'हद'], ['Йога', 'Иога']]
    for (const [a, b] of pairs) expect(snakeCase(a), a).not.toBe(snakeCase(b))
    // Hangul comes back composed whether it was given composed or as jamo.
    expect(snakeCase('고객'.normalize('NFD'))).toBe('고객')
    expect([...snakeCase('고객')]).toHaveLength(2)
  })

  it('gives "" for a name without letters or digits', () => {
    expect(snakeCase('🔥 - 🔥')).toBe('')
    expect(snakeCase('')).toBe('')
  })
})

describe('audienceSync', () => {
  const timestamp = '2026-11-22T10:00:00.000Z'

  it('first sync (no previous members): an identify with the trait true for every member', () => {
    const payloads = audienceSync('High Value Users', [], ['u1', 'u2', 'u3'], { timestamp })
    expect(payloads).toHaveLength(3)
    expect(payloads.map((p) => p.userId)).toEqual(['u1', 'u2', 'u3'])
    for (const payload of payloads) {
      expect(payload).toStrictEqual({
        version: 1,
        type: 'identify',
        messageId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        userId: payload.userId,
        traits: { high_value_users: true },
        timestamp,
        context: {},
      })
    }
    expect(new Set(payloads.map((p) => p.messageId)).size).toBe(3)
    expect(audienceSync('x', undefined, ['u1'])).toHaveLength(1)
  })

  it('later syncs: added members true, removed members false, unchanged members omitted', () => {
    const payloads = audienceSync('VIP-Customers 2024', new Set(['u1', 'u2', 'u3']), new Set(['u2', 'u3', 'u4', 'u5']), { timestamp })
    expect(payloads.map((p) => [p.userId, p.traits])).toEqual([
      ['u4', { vip_customers_2024: true }],
      ['u5', { vip_customers_2024: true }],
      ['u1', { vip_customers_2024: false }],
    ])
  })

  it('nothing changed: no payloads; everyone left: all false; duplicates count once', () => {
    expect(audienceSync('a', ['u1', 'u2'], ['u2', 'u1'])).toEqual([])
    expect(audienceSync('a', ['u1', 'u2'], []).map((p) => p.traits.a)).toEqual([false, false])
    expect(audienceSync('a', [], ['u1', 'u1', 'u1'])).toHaveLength(1)
  })

  it('accepts any iterable (generator, Map keys) and a Date timestamp; passes context through', () => {
    function* members() {
      yield 'u1'
      yield 'u2'
    }
    const context = { source: 'personas' }
    const payloads = audienceSync('Café Lovers', new Map([['u1', 1]]).keys(), members(), {
      timestamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)),
      context,
    })
    expect(payloads).toHaveLength(1)
    expect(payloads[0]).toMatchObject({ userId: 'u2', traits: { cafe_lovers: true }, timestamp: '2026-01-02T03:04:05.006Z', context })
  })

  it('throws ValidationError for an audience name without letters or digits, bad member ids, a string as members, or no current members', () => {
    const bad: Array<[() => unknown, string]> = [
      [() => audienceSync('🔥', [], ['u1']), 'audienceName'],
      [() => audienceSync(42 as unknown as string, [], ['u1']), 'audienceName'],
      [() => audienceSync('a', [], ['u1', '']), 'currentMembers'],
      [() => audienceSync('a', [], ['u1', ' \t ']), 'currentMembers'],
      [() => audienceSync('a', [7 as unknown as string], []), 'previousMembers'],
      [() => audienceSync('a', [], 'u1' as unknown as string[]), 'currentMembers'],
      [() => audienceSync('a', [], 5 as unknown as string[]), 'currentMembers'],
      // Only previousMembers may be missing: no current members is not "everyone left".
      [() => audienceSync('a', ['u1'], undefined as unknown as string[]), 'currentMembers'],
      [() => audienceSync('a', ['u1'], null as unknown as string[]), 'currentMembers'],
      [() => audienceSync('a', [], ['u1'], { timestamp: 'nope' }), 'timestamp'],
    ]
    for (const [call, field] of bad) {
      let error: unknown
      try {
        call()
      } catch (e) {
        error = e
      }
      expect(isValidationError(error), field).toBe(true)
      expect((error as { field: string }).field).toBe(field)
    }
    expect(() => audienceSync('a', ['u1'], undefined as unknown as string[])).toThrow(
      'Expected `currentMembers` to be an iterable of user ids (an array or a Set), got `undefined`.',
    )
  })

  it('timestamp: accepts what toWebhookPayload accepts, read the same way (UTC without an offset, whatever the time zone)', () => {
    const tz = process.env.TZ
    process.env.TZ = 'America/New_York'
    try {
      for (const timestamp of ['2026-11-22 10:00', '2026-11-22T10:00:00', '2026-11-22T05:00:00-05', new Date(Date.UTC(2026, 10, 22, 10))]) {
        const [payload] = audienceSync('a', [], ['u1'], { timestamp })
        const expected = toWebhookPayload({ type: 'identify', userId: 'u1', timestamp }).timestamp
        expect(payload.timestamp, String(timestamp)).toBe(expected)
        expect(payload.timestamp).toBe('2026-11-22T10:00:00.000Z')
      }
      for (const timestamp of ['5', 'March 7', '2026-02-30T00:00:00Z', 1_700_000_000_000 as unknown as string]) {
        expect(() => audienceSync('a', [], ['u1'], { timestamp }), String(timestamp)).toThrow(/^Expected `timestamp` to be a valid Date or ISO 8601 string/)
      }
    } finally {
      if (tz === undefined) delete process.env.TZ
      else process.env.TZ = tz
    }
  })
})
