import { describe, expect, it } from 'vitest'
import { maskSecret, maskUrl } from '../src/secrets.js'

describe('maskSecret', () => {
  it('shows at most the last four characters, and none of a short secret', () => {
    expect(maskSecret('wk_live_4f9a1b2c3d')).toBe('…2c3d')
    expect(maskSecret('123456789')).toBe('…6789')
    expect(maskSecret('12345678')).toBe('…')
    expect(maskSecret('KEY')).toBe('…')
  })
})

describe('maskUrl', () => {
  it('masks credential query parameters and leaves the rest of the URL as it is', () => {
    expect(maskUrl('http://127.0.0.1:8700/beacon/v1/batch?writeKey=wk_live_0123456789&x=1')).toBe('http://127.0.0.1:8700/beacon/v1/batch?writeKey=…6789&x=1')
    expect(maskUrl('http://h/v1/batch')).toBe('http://h/v1/batch')
    expect(maskUrl('http://h/p?token=short')).toBe('http://h/p?token=…')
    expect(maskUrl('https://hooks.example.com/in?api_key=ak_0123456789&access_token=at_0123456789&sig=abcdefghij#x'))
      .toBe('https://hooks.example.com/in?api_key=…6789&access_token=…6789&sig=…ghij#x')
    expect(maskUrl('https://h/p?keyword=seo&monkey=1')).toBe('https://h/p?keyword=seo&monkey=1')
  })
})
