/**
 * The portable signing path: where `node:crypto` cannot be had synchronously (browsers, workers,
 * edge runtimes, Node before 20.16: no `process.getBuiltinModule`), signatures come from the
 * pure-JS HMAC over UTF-8 bytes encoded into a reused buffer that grows with the body. Here the
 * signing module is loaded as on such a runtime, and every digest is checked against node:crypto.
 */
import { createHmac } from 'node:crypto'
import { beforeAll, describe, expect, it, vi } from 'vitest'

type Signature = typeof import('../../src/webhooks/signature.js')
type Hmac = typeof import('../../src/platform/hmac.js')

const SECRET = 'whsec_0123456789'
const nodeHmac = (body: string | Uint8Array, secret: string) => createHmac('sha1', secret).update(body).digest('hex')

let portable: Signature
let hmac: Hmac

beforeAll(async () => {
  const proc = process as { getBuiltinModule?: unknown }
  const getBuiltinModule = proc.getBuiltinModule
  proc.getBuiltinModule = undefined
  try {
    vi.resetModules()
    hmac = await import('../../src/platform/hmac.js')
    portable = await import('../../src/webhooks/signature.js')
  } finally {
    proc.getBuiltinModule = getBuiltinModule
  }
})

describe('the portable signing path (no node:crypto)', () => {
  it('is the path in use where the runtime offers no native HMAC', () => {
    expect(hmac.nativeHmacSha1).toBeUndefined()
  })

  it('signs short and long text bodies like node:crypto, however far each outgrows the last', () => {
    // The reused buffer (4,096 bytes at first) must grow past each body's longest encoding: at
    // once to 90,000 bytes (many times its size), then by small steps and large, and back.
    const bodies = [
      '中'.repeat(30_000),
      '',
      '{"type":"track","event":"Clicked"}',
      'é🔥x'.repeat(5_000),
      '中'.repeat(30_001),
      'x'.repeat(70_000),
      'short again',
      'lone \ud800 surrogate',
    ]
    for (const body of bodies) {
      expect(portable.signSync(body, SECRET), `${body.length} UTF-16 units`).toBe(nodeHmac(body, SECRET))
    }
  })

  it('signs bytes like node:crypto, whatever they would read as text', () => {
    const bytes = new Uint8Array(5_000).map((_, i) => (i * 31) & 0xff)
    expect(portable.signSync(bytes, SECRET)).toBe(nodeHmac(bytes, SECRET))
    expect(portable.signSync(new TextEncoder().encode('é🔥x'), SECRET)).toBe(nodeHmac('é🔥x', SECRET))
  })

  it('verifies what node:crypto signed, as text and as bytes, and refuses a tampered body', async () => {
    const body = '{"type":"identify","traits":{"city":"São Paulo"}}'.repeat(200)
    const signature = nodeHmac(body, SECRET)
    expect(await portable.verifySignature(body, signature, SECRET)).toBe(true)
    expect(await portable.verifySignature(new TextEncoder().encode(body), signature, SECRET)).toBe(true)
    expect(await portable.verifySignature(body.replace('São', 'Sao'), signature, SECRET)).toBe(false)
    expect(await portable.verifySignature(body, signature, '')).toBe(false)
  })
})
