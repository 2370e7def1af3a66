import { describe, expect, it } from 'vitest'
import { describeJsonSyntaxError, findJsonSyntaxError } from '../../src/message/json-syntax.js'

describe('findJsonSyntaxError', () => {
  it.each<[string, number, string]>([
    ['{"writeKey":WRITEKEY_SECRET_abcd1234}', 12, 'a value (an object, array, string, number, true, false or null)'],
    ["{'writeKey':'k'}", 1, 'a property name in double quotes or `}`'],
    ['{"writeKey":"k", batch:[]}', 17, 'a property name in double quotes'],
    ['{"a" 1}', 5, '`:`'],
    ['{"a":1 "b":2}', 7, '`,` or `}`'],
    ['[1,2', 4, '`,` or `]`'],
    ['[1,]', 3, 'a value (an object, array, string, number, true, false or null)'],
    ['{"a":"b\\x"}', 7, 'a valid escape (`\\"`, `\\\\`, `\\n`, `\\u00e9`, …)'],
    ['{"a":"b\nc"}', 7, 'no control character in a string (escape it)'],
    ['{"a":"bc', 8, 'the closing `"` of a string'],
    ['{} x', 3, 'the end of the text'],
    ['writeKey=WRITEKEY_SECRET_abcd1234&batch=x', 0, 'a value (an object, array, string, number, true, false or null)'],
  ])('%j: at %i, expected %s', (text, position, expected) => {
    expect(findJsonSyntaxError(text)).toEqual({ position, expected })
  })

  it('agrees with JSON.parse on which texts are JSON (random texts and mutations of JSON)', () => {
    let seed = 7
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31)
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]
    const value = (depth: number): unknown => {
      const kind = depth > 3 ? pick(['n', 's', 'l']) : pick(['n', 's', 'l', 'a', 'o'])
      if (kind === 'n') return pick([0, -1, 1.5, 2e-7, 123456789, -0.25])
      if (kind === 's') return pick(['', 'a b', 'é', '\n\t"\\', '\u0001', '\ud83d\ude00'])
      if (kind === 'l') return pick([true, false, null])
      if (kind === 'a') return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1))
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`k${i}`, value(depth + 1)]))
    }
    const alphabet = ['{', '}', '[', ']', ',', ':', '"', '\\', ' ', '\n', '-', '.', 'e', '0', '1', 't', 'n', 'u', 'x', '\u0002']
    for (let n = 0; n < 3_000; n++) {
      let text = JSON.stringify(value(0), null, random() < 0.5 ? 0 : 2)
      for (let edits = Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (text.length + 1))
        const r = random()
        text = r < 0.4 ? text.slice(0, at) + pick(alphabet) + text.slice(at) : r < 0.8 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at)
      }
      let parses = true
      try {
        JSON.parse(text)
      } catch {
        parses = false
      }
      expect(findJsonSyntaxError(text) === undefined, text).toBe(parses)
    }
  })

  it('reads deep nesting without recursion', () => {
    expect(findJsonSyntaxError('['.repeat(200_000) + ']'.repeat(200_000))).toBeUndefined()
    expect(findJsonSyntaxError('['.repeat(200_000))).toEqual({ position: 200_000, expected: 'a value (an object, array, string, number, true, false or null)' })
  })
})

describe('describeJsonSyntaxError', () => {
  it('gives the position, line and column, and none of the text', () => {
    expect(describeJsonSyntaxError('{\n  "writeKey": WRITEKEY_SECRET_abcd1234\n}')).toBe(
      'expected a value (an object, array, string, number, true, false or null) at position 16 (line 2, column 15)',
    )
    expect(describeJsonSyntaxError('{"batch":[')).toBe('it ends at position 10 (line 1, column 11), where a value (an object, array, string, number, true, false or null) was expected')
  })
})
