/**
 * The shape checks of a message's JSON besides its size (src/message/validate.ts, the end):
 * nesting depth, read from the text (`tooDeep`) or from the value (`deeperThan`, `tooDeepError`),
 * and `Map`/`Set` values, which JSON would turn into `{}` (`refuseCollections`).
 */
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { ValidationError } from '../../src/errors.js'
import { MAX_DEPTH } from '../../src/limits.js'
import { deeperThan, refuseCollections, tooDeep, tooDeepError } from '../../src/message/validate.js'

/** `levels` objects, each inside the one before: `nest(1)` is `{}`, `nest(2)` is `{ a: {} }`. */
const nest = (levels: number): object => (levels <= 1 ? {} : { a: nest(levels - 1) })
const arrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels)

/** The error `refuseCollections` throws for `value`, or `undefined`. */
function refusal(value: unknown): ValidationError | undefined {
  try {
    refuseCollections(value, '')
    return undefined
  } catch (error) {
    return error as ValidationError
  }
}

describe('tooDeep (from the JSON text)', () => {
  it('allows exactly `max` levels and refuses one more, of arrays and of objects', () => {
    for (const max of [0, 1, 2, 5]) {
      expect(tooDeep(arrays(max), max)).toBe(false)
      expect(tooDeep(arrays(max + 1), max)).toBe(true)
      expect(tooDeep(JSON.stringify(nest(max)), max)).toBe(max === 0)
      expect(tooDeep(JSON.stringify(nest(max + 1)), max)).toBe(true)
    }
  })

  it('counts a bracket at the very start of the text', () => {
    expect(tooDeep('[]', 0)).toBe(true)
    expect(tooDeep('{}', 0)).toBe(true)
  })

  it('counts `{` and `[` together', () => {
    expect(tooDeep('{"a":[1]}', 1)).toBe(true)
    expect(tooDeep('{"a":[1]}', 2)).toBe(false)
    expect(tooDeep('[{"a":1}]', 1)).toBe(true)
  })

  it('reads depth, not the number of brackets: closed ones are left', () => {
    expect(tooDeep('[[1],[2],[3],{"a":1}]', 2)).toBe(false)
    expect(tooDeep('{"a":{},"b":{},"c":{"d":[]}}', 2)).toBe(true)
  })

  it('skips brackets inside strings, escaped quotes and backslashes included', () => {
    expect(tooDeep('{"a":"[[[[{{{{"}', 1)).toBe(false)
    expect(tooDeep('{"a":"\\"[[[[","b":1}', 1)).toBe(false)
    // A string ending in an escaped backslash: the quote after it ends the string.
    expect(tooDeep('{"a":"\\\\","b":[[1]]}', 2)).toBe(true)
    expect(tooDeep('{"a":"\\\\","b":[[1]]}', 3)).toBe(false)
    expect(tooDeep('{"[[[":"]]]{{{","b":[1]}', 2)).toBe(false)
  })
})

describe('deeperThan (from the value)', () => {
  it('is false for values that are not objects, null included', () => {
    for (const value of [null, undefined, 1, 'text', true]) expect(deeperThan(value, 0)).toBe(false)
  })

  it('is true past `levels`, false up to it, through objects and arrays', () => {
    expect(deeperThan({}, 0)).toBe(true)
    expect(deeperThan({ a: 1 }, 1)).toBe(false)
    expect(deeperThan({ a: {} }, 1)).toBe(true)
    expect(deeperThan({ a: {} }, 2)).toBe(false)
    expect(deeperThan([[]], 1)).toBe(true)
    expect(deeperThan([[]], 2)).toBe(false)
    expect(deeperThan({ a: 1, b: { c: [] } }, 2)).toBe(true)
    expect(deeperThan(nest(7), 6)).toBe(true)
    expect(deeperThan(nest(7), 7)).toBe(false)
  })
})

describe('tooDeepError', () => {
  it('names the first field nested past the limit (the message itself is the first level)', () => {
    const error = tooDeepError({ event: 'e', ok: nest(MAX_DEPTH - 1), properties: nest(MAX_DEPTH), traits: nest(MAX_DEPTH) })
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.field).toBe('properties')
    expect(error.message).toBe(`\`properties\` nests objects and arrays too deep: a message may nest at most ${MAX_DEPTH} levels (the message itself is the first).`)
  })

  it('names the message when no field is past the limit', () => {
    const error = tooDeepError({ event: 'e', properties: nest(MAX_DEPTH - 1) })
    expect(error.field).toBe('message')
    expect(error.message).toMatch(/^`message` nests objects and arrays too deep/)
  })
})

describe('refuseCollections', () => {
  it('refuses a Map or a Set, naming where it is and what to pass instead', () => {
    const map = refusal({ properties: { tags: new Map([['a', 1]]) } })
    expect(map).toBeInstanceOf(ValidationError)
    expect(map?.field).toBe('properties.tags')
    expect(map?.message).toBe('Cannot send `properties.tags`: it is a Map, which JSON would turn into `{}`. Pass Object.fromEntries(map) instead.')
    const set = refusal({ items: [1, null, new Set([1])] })
    expect(set?.field).toBe('items[2]')
    expect(set?.message).toBe('Cannot send `items[2]`: it is a Set, which JSON would turn into `{}`. Pass [...set] instead.')
    expect(refusal(new Map())?.message).toBe('Cannot send ``: it is a Map, which JSON would turn into `{}`. Pass Object.fromEntries(map) instead.')
  })

  it('finds one from another realm (a `vm` context), by its tag', () => {
    expect(refusal({ a: runInNewContext('new Map()') })?.field).toBe('a')
  })

  it('leaves every other value alone: null, primitives, dates, cycles, a value with its own toJSON', () => {
    const cycle: Record<string, unknown> = { n: null }
    cycle.self = cycle
    for (const value of [null, 1, 'text', { a: null, b: 'x', c: [1, 'y', null] }, new Date(0), cycle]) expect(refusal(value)).toBeUndefined()
    expect(refusal({ when: { toJSON: () => 'now', inside: new Map() } })).toBeUndefined()
  })

  it('reads the whole tag: a tag that only contains a Map or Set tag is not one', () => {
    expect(refusal({ [Symbol.toStringTag]: 'Foo][object Map' })).toBeUndefined()
    expect(refusal({ [Symbol.toStringTag]: 'Set]x' })).toBeUndefined()
  })
})
