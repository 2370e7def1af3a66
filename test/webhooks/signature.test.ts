import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { isConfigError, isValidationError, sign, SIGNATURE_HEADER, verifySignature } from '../../src/webhooks/index.js'
import { nativeHmacSha1 } from '../../src/platform/hmac.js'
import { portableHmacSha1, signSync, timingSafeEqual } from '../../src/webhooks/signature.js'

const SECRET = 'whsec_0123456789'
const nodeHmac = (body: string | Buffer, secret: string) => createHmac('sha1', secret).update(body).digest('hex')

const BODIES: Record<string, string> = {
  empty: '',
  ascii: '{"version":1,"type":"track","event":"Order Completed","properties":{"total":12.5}}',
  'multi-byte': '{"type":"identify","traits":{"name":"Zoë Æsir","city":"São Paulo","größe":"groß","中文":"汉字"}}',
  emoji: '{"type":"track","event":"🔥 Hot","properties":{"mood":"😀👍🏽","flag":"🇯🇵","family":"👨‍👩‍👧"}}',
  'escaped and raw': '{"a":"\\u00e9 vs é","b":"line\\nbreak","c":"\\ud83d\\ude00 vs 😀"}',
}

describe('sign', () => {
  for (const [name, body] of Object.entries(BODIES)) {
    it(`matches node:crypto HMAC-SHA1 for a ${name} body`, async () => {
      const signature = await sign(body, SECRET)
      expect(signature).toBe(nodeHmac(body, SECRET))
      expect(signature).toMatch(/^[0-9a-f]{40}$/)
    })
  }

  it('signs the UTF-8 bytes: a string and its Uint8Array encoding give the same signature', async () => {
    const body = BODIES.emoji
    expect(await sign(new TextEncoder().encode(body), SECRET)).toBe(await sign(body, SECRET))
  })

  it('matches node:crypto at every length around the 64-byte block boundaries, with short, long and non-ASCII keys', () => {
    const keys = ['k', 'x'.repeat(64), 'long key '.repeat(20), 'clé secrète 🔑']
    for (const secret of keys) {
      for (let length = 0; length <= 300; length++) {
        const body = Buffer.alloc(length, 0)
        for (let i = 0; i < length; i++) body[i] = (i * 31 + length) & 0xff
        const ours = signSync(new Uint8Array(body), secret)
        expect(ours, `key ${JSON.stringify(secret)}, length ${length}`).toBe(nodeHmac(body, secret))
      }
    }
  })

  it('signs through the runtime\'s own crypto on Node; the pure-JS fallback (browsers, workers) gives the same digests', () => {
    expect(nativeHmacSha1).toBeTypeOf('function')
    const hex = (digest: Uint8Array) => Buffer.from(digest).toString('hex')
    const encoder = new TextEncoder()
    for (const secret of ['k', 'x'.repeat(65), 'clé secrète 🔑']) {
      for (const body of [...Object.values(BODIES), 'é🔥x'.repeat(5_000), 'lone \ud800 surrogate']) {
        expect(hex(portableHmacSha1(secret, encoder.encode(body))), body.slice(0, 20)).toBe(nodeHmac(body, secret))
        expect(hex(nativeHmacSha1!(secret, body))).toBe(nodeHmac(body, secret))
      }
      for (let length = 0; length <= 200; length++) {
        const body = new Uint8Array(length).map((_, i) => (i * 31 + length) & 0xff)
        expect(hex(portableHmacSha1(secret, body)), `length ${length}`).toBe(nodeHmac(Buffer.from(body), secret))
      }
    }
  })

  it('hashes a large body (1 MB, many blocks) like node:crypto', async () => {
    const body = 'é🔥x'.repeat(150_000)
    expect(await sign(body, SECRET)).toBe(nodeHmac(body, SECRET))
  })

  it('rejects with a ConfigError naming `secret` for an empty or missing secret', async () => {
    await expect(sign('{}', '')).rejects.toSatisfy(isConfigError)
    await expect(sign('{}', '')).rejects.toMatchObject({
      code: 'CONFIG', option: 'secret', message: 'Expected `secret` to be a non-empty string, got `""`.',
    })
    await expect(sign('{}', undefined as unknown as string)).rejects.toMatchObject({
      option: 'secret', message: 'Expected `secret` to be a non-empty string, got `undefined`.',
    })
    await expect(sign('{}', { key: SECRET } as unknown as string)).rejects.toMatchObject({
      message: 'Expected `secret` to be a non-empty string, got an object.',
    })
  })

  it('names a number, bigint or Date given as the secret by its kind and last four characters only (it may be a credential)', async () => {
    const cases: Array<[unknown, string]> = [
      [1234567890123, 'a number (`…0123`; not shown in full: it may be a credential)'],
      [98765432109876n, 'a bigint (`…9876`; not shown in full: it may be a credential)'],
      [42, 'a number (`…`; not shown in full: it may be a credential)'],
    ]
    for (const [secret, shown] of cases) {
      await expect(sign('{}', secret as string)).rejects.toMatchObject({ option: 'secret', message: `Expected \`secret\` to be a non-empty string, got ${shown}.` })
    }
    const date = new Date(Date.UTC(2026, 10, 25))
    await expect(sign('{}', date as unknown as string)).rejects.toMatchObject({
      message: `Expected \`secret\` to be a non-empty string, got a Date (\`…${String(date).slice(-4)}\`; not shown in full: it may be a credential).`,
    })
  })

  it('rejects a body that is neither a string nor bytes with a ValidationError naming `body`', async () => {
    await expect(sign({ a: 1 } as unknown as string, SECRET)).rejects.toSatisfy(isValidationError)
    await expect(sign({ a: 1 } as unknown as string, SECRET)).rejects.toMatchObject({
      code: 'VALIDATION', field: 'body', message: 'Expected `body` to be a string or a Uint8Array, got an object.',
    })
  })

  it('travels in the X-Signature header', () => {
    expect(SIGNATURE_HEADER).toBe('X-Signature')
  })
})

describe('verifySignature', () => {
  for (const [name, body] of Object.entries(BODIES)) {
    it(`accepts node:crypto's signature of a ${name} body, as a string and as bytes`, async () => {
      const signature = nodeHmac(body, SECRET)
      const bytes = Buffer.from(body, 'utf8')
      expect(await verifySignature(body, signature, SECRET)).toBe(true)
      expect(await verifySignature(bytes, signature, SECRET)).toBe(true)
      expect(await verifySignature(new Uint8Array(bytes).buffer, signature, SECRET)).toBe(true)
      expect(await verifySignature(new DataView(new Uint8Array(bytes).buffer), signature, SECRET)).toBe(true)
    })
  }

  it('accepts a byte view into a larger buffer (offset honoured)', async () => {
    const body = Buffer.from(BODIES.ascii)
    const big = Buffer.concat([Buffer.from('garbage'), body, Buffer.from('trailing')])
    const view = big.subarray(7, 7 + body.length)
    expect(await verifySignature(view, nodeHmac(body, SECRET), SECRET)).toBe(true)
  })

  it('accepts upper-case hex and surrounding whitespace', async () => {
    const signature = nodeHmac(BODIES.ascii, SECRET)
    expect(await verifySignature(BODIES.ascii, signature.toUpperCase(), SECRET)).toBe(true)
    expect(await verifySignature(BODIES.ascii, ` ${signature} `, SECRET)).toBe(true)
  })

  it('is false for a tampered body, a wrong secret, or a re-serialised body', async () => {
    const body = '{"b":1, "a":"é"}'
    const signature = nodeHmac(body, SECRET)
    expect(await verifySignature(body.replace('1', '2'), signature, SECRET)).toBe(false)
    expect(await verifySignature(body, signature, 'other secret')).toBe(false)
    expect(await verifySignature(JSON.stringify(JSON.parse(body)), signature, SECRET)).toBe(false)
  })

  it('is false, never a throw, for missing or malformed signatures and bad arguments', async () => {
    const body = BODIES.ascii
    const good = nodeHmac(body, SECRET)
    const bad: unknown[] = [undefined, null, '', 'abc', good.slice(1), good + '0', 'z'.repeat(40), `sha1=${good}`, 42, {}, [good], new String(good)]
    for (const signature of bad) {
      await expect(verifySignature(body, signature as string, SECRET), String(signature)).resolves.toBe(false)
    }
    await expect(verifySignature(body, good, '')).resolves.toBe(false)
    await expect(verifySignature(body, good, undefined as unknown as string)).resolves.toBe(false)
    await expect(verifySignature(42 as unknown as string, good, SECRET)).resolves.toBe(false)
    await expect(verifySignature(null as unknown as string, good, SECRET)).resolves.toBe(false)
  })

  it('a receiver with an empty secret (an unset environment variable) refuses every signature, even one made with the empty key', async () => {
    for (const body of ['', BODIES.ascii]) {
      for (const signature of [nodeHmac(body, ''), nodeHmac(body, SECRET)]) {
        await expect(verifySignature(body, signature, ''), JSON.stringify(body)).resolves.toBe(false)
        await expect(verifySignature(Buffer.from(body), signature, '')).resolves.toBe(false)
      }
    }
  })

  it('a receiver whose secret is not a string refuses every signature, even one made with the same bytes', async () => {
    const body = BODIES.ascii
    const signature = nodeHmac(body, SECRET)
    for (const secret of [Buffer.from(SECRET), new TextEncoder().encode(SECRET), [SECRET], 12345]) {
      await expect(verifySignature(body, signature, secret as unknown as string)).resolves.toBe(false)
    }
  })

  it('a body that is neither text nor bytes (an already parsed object) is refused, even with the empty body\'s signature', async () => {
    const empty = nodeHmac('', SECRET)
    expect(await verifySignature('', empty, SECRET)).toBe(true)
    for (const body of [JSON.parse(BODIES.ascii), {}, [], 42, true]) {
      await expect(verifySignature(body as string, empty, SECRET), JSON.stringify(body)).resolves.toBe(false)
      await expect(verifySignature(body as string, nodeHmac(JSON.stringify(body), SECRET), SECRET)).resolves.toBe(false)
    }
  })

  it('a body whose bytes are gone (its buffer transferred elsewhere) is refused, never a throw', async () => {
    const bytes = new TextEncoder().encode('')
    const signature = nodeHmac('', SECRET)
    expect(await verifySignature(bytes, signature, SECRET)).toBe(true)
    structuredClone(bytes.buffer, { transfer: [bytes.buffer] })
    expect(bytes.buffer.byteLength).toBe(0)
    await expect(verifySignature(bytes.buffer, signature, SECRET)).resolves.toBe(false)
  })
})

describe('timingSafeEqual', () => {
  it('holds only for arrays of the same length and bytes, one a prefix of the other included', () => {
    const a = new Uint8Array([1, 2, 3])
    expect(timingSafeEqual(a, new Uint8Array([1, 2, 3]))).toBe(true)
    expect(timingSafeEqual(a, new Uint8Array([1, 2, 4]))).toBe(false)
    expect(timingSafeEqual(a, new Uint8Array([1, 2]))).toBe(false)
    expect(timingSafeEqual(new Uint8Array([1, 2]), a)).toBe(false)
    expect(timingSafeEqual(new Uint8Array(0), a)).toBe(false)
  })
})
