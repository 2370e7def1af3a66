import { describe, expect, it } from 'vitest'
import { nonFiniteAsNull } from '../../src/message/non-finite.js'

describe('nonFiniteAsNull', () => {
  it('writes each NaN, Infinity and -Infinity outside strings as null', () => {
    expect(nonFiniteAsNull('{"a":NaN,"b":[Infinity,-Infinity],"c":-1}')).toBe('{"a":null,"b":[null,null],"c":-1}')
    expect(nonFiniteAsNull('NaN')).toBe('null')
    expect(nonFiniteAsNull('[ -Infinity ]')).toBe('[ null ]')
  })

  it('leaves strings alone, escaped quotes included, and says undefined when there is nothing to replace', () => {
    expect(nonFiniteAsNull('{"NaN":"Infinity \\" NaN","x":NaN}')).toBe('{"NaN":"Infinity \\" NaN","x":null}')
    expect(nonFiniteAsNull('{"a":"NaN","b":"-Infinity"}')).toBeUndefined()
    expect(nonFiniteAsNull('{"a":1}')).toBeUndefined()
  })

  it('replaces only the token, so text that is not JSON for another reason stays so', () => {
    const fixed = nonFiniteAsNull('{"a":NaNa}')
    expect(fixed).toBe('{"a":nulla}')
    expect(() => JSON.parse(fixed!)).toThrow()
  })
})
