import { describe, expect, it } from 'vitest'
import { maskSecret } from '../src/secrets.js'

describe('maskSecret', () => {
  it('shows at most the last four characters, and none of a short secret', () => {
    expect(maskSecret('wk_live_4f9a1b2c3d')).toBe('…2c3d')
    expect(maskSecret('123456789')).toBe('…6789')
    expect(maskSecret('12345678')).toBe('…')
    expect(maskSecret('KEY')).toBe('…')
  })
})
