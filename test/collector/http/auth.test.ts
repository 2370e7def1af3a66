import { describe, expect, it } from 'vitest'
import { writeKeyFromHeader } from '../../../src/collector/http/auth.js'

const basic = (value: string) => new Request('http://collector.test/v1/batch', { headers: { authorization: value } })
const encode = (text: string) => 'Basic ' + Buffer.from(text, 'utf8').toString('base64')

describe('writeKeyFromHeader (decoded once per distinct header value)', () => {
  it('the same header gives the same key every time, and different headers their own keys', () => {
    expect(writeKeyFromHeader(basic(encode('key-a:')))).toBe('key-a')
    expect(writeKeyFromHeader(basic(encode('key-a:')))).toBe('key-a')
    expect(writeKeyFromHeader(basic(encode('ключ-b:')))).toBe('ключ-b')
    expect(writeKeyFromHeader(new Request('http://collector.test/'))).toBeUndefined()
  })

  it('a bad header is refused every time it is sent (failures are not remembered as keys)', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => writeKeyFromHeader(basic('Basic !!!'))).toThrow('not valid base64')
      expect(() => writeKeyFromHeader(basic(encode(':')))).toThrow('empty write key')
      expect(() => writeKeyFromHeader(basic('Digest x'))).toThrow('Expected `Authorization: Basic')
    }
  })

  it('a Bearer token (OAuth) is not a write key: none from the header, the body names the source', () => {
    expect(writeKeyFromHeader(basic('Bearer eyJhbGciOi.x.y'))).toBeUndefined()
    expect(writeKeyFromHeader(basic('bearer x'))).toBeUndefined()
  })

  it('past the memo bound (1,000 values) every header still decodes to its own key', () => {
    for (let i = 0; i < 2500; i++) expect(writeKeyFromHeader(basic(encode(`k${i}:`)))).toBe(`k${i}`)
    expect(writeKeyFromHeader(basic(encode('k0:')))).toBe('k0')
    expect(writeKeyFromHeader(basic(encode('k2499:')))).toBe('k2499')
  })
})
