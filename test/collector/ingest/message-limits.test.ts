/** `withinMessageLimits`: when a body's messages need no size check of their own. */
import { describe, expect, it } from 'vitest'
import { withinMessageLimits } from '../../../src/collector/ingest/parse.js'
import { track } from '../helpers.js'

const batch = (...messages: unknown[]) => JSON.stringify({ batch: messages, context: { library: { name: 'x' } } })

describe('withinMessageLimits', () => {
  it('holds for a small batch (20 ordinary events)', () => {
    expect(withinMessageLimits(batch(...Array.from({ length: 20 }, () => track())), false)).toBe(true)
  })

  it('does not hold for a body a third of the limit or more, exponent numbers, integers beyond 2^53 or deep nesting', () => {
    expect(withinMessageLimits(batch(track({ properties: { pad: 'x'.repeat(10_650) } })), false)).toBe(false)
    expect(withinMessageLimits(batch(track({ properties: { n: 1e21 } })), false)).toBe(false)
    expect(withinMessageLimits('{"batch":[{"type":"track","n":2E3}]}', false)).toBe(false)
    expect(withinMessageLimits(batch(track()), true)).toBe(false)
    expect(withinMessageLimits(`{"batch":[${'['.repeat(101)}${']'.repeat(101)}]}`, false)).toBe(false)
  })
})
