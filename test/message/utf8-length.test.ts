import { describe, expect, it } from 'vitest'
import { MAX_BATCH_BYTES, MAX_MESSAGE_BYTES, utf8Length } from '../../src/limits.js'

describe('utf8Length agrees with Buffer.byteLength', () => {
  const samples: Array<[string, string]> = [
    ['empty', ''],
    ['ASCII', 'hello, world {"a":1}'],
    ['2-byte', 'é ñ ß Ж ש'],
    ['3-byte', '€ 中文 日本語 ✓'],
    ['4-byte emoji', '😀🎉👍🏽 𝄞'],
    ['ZWJ sequence', '👩‍👩‍👧‍👦'],
    ['boundaries', '\u007f\u0080\u07ff\u0800\uffff'],
    ['mixed', 'a€😀é'.repeat(1000)],
  ]
  it.each(samples)('%s', (_, text) => {
    expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'))
  })

  it.each(samples)('%s inside JSON.stringify output', (_, text) => {
    const json = JSON.stringify({ text, nested: { list: [text, text] } })
    expect(utf8Length(json)).toBe(Buffer.byteLength(json, 'utf8'))
  })

  it.each([
    ['lone high surrogate', 'a\ud800b'],
    ['lone low surrogate', 'a\udc00b'],
    ['high surrogate at the end', 'ab\ud83d'],
    ['reversed pair', '\ude00\ud83d'],
    ['two highs then a low', '\ud83d\ud83d\ude00'],
  ])('%s, raw (encoded as U+FFFD, 3 bytes)', (_, text) => {
    expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'))
  })

  it.each([['\ud800'], ['\udfff'], ['x\ud83dy'], ['\ude00\ud83d']])('lone surrogates %j inside JSON.stringify output (escaped)', (text) => {
    const json = JSON.stringify({ text })
    expect(json).toContain('\\u')
    expect(utf8Length(json)).toBe(Buffer.byteLength(json, 'utf8'))
  })

  it('is fast enough on a large string to be exact where it matters', () => {
    const text = '€'.repeat(200_000)
    expect(utf8Length(text)).toBe(600_000)
  })
})

describe('limits', () => {
  it('are the service’s', () => {
    expect(MAX_MESSAGE_BYTES).toBe(32_000)
    expect(MAX_BATCH_BYTES).toBe(500_000)
  })
})
