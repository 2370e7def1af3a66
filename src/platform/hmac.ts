/**
 * HMAC-SHA1 through the runtime's own crypto, where `node:crypto` can be had synchronously
 * (`process.getBuiltinModule`: Node ≥ 20.16, Bun, Deno). It costs about a third of the CPU of the
 * pure-JS HMAC that src/webhooks/signature.ts falls back to elsewhere (browsers, workers, older
 * Node), and signing runs once per webhook delivery. Both hash the secret's and the body's UTF-8
 * bytes, so they give the same signature for the same text (lone surrogates become U+FFFD in both).
 */
interface NodeCrypto {
  createHmac(algorithm: 'sha1' | 'sha256', key: string | Uint8Array): { update(data: string | Uint8Array): { digest(): Uint8Array } }
  createHash(algorithm: 'sha256'): { update(data: string | Uint8Array): { digest(): Uint8Array } }
}

const proc = globalThis.process as { getBuiltinModule?: (id: string) => unknown } | undefined

function load(): NodeCrypto | undefined {
  try {
    const crypto = proc?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined
    return typeof crypto?.createHmac === 'function' ? crypto : undefined
  } catch {
    return undefined
  }
}

const nodeCrypto = load()

/** The HMAC-SHA1 digest of `body` (a string is hashed as UTF-8) keyed with `secret`, if the runtime offers one. */
export const nativeHmacSha1: ((secret: string, body: string | Uint8Array) => Uint8Array) | undefined = nodeCrypto
  ? (secret, body) => nodeCrypto.createHmac('sha1', secret).update(body).digest()
  : undefined

/**
 * HMAC-SHA256 (Standard Webhooks signatures, src/webhooks/standard.ts), keyed with the secret's
 * bytes, where the runtime offers it; the same portable fallback applies elsewhere.
 */
export const nativeHmacSha256: ((key: Uint8Array, body: string | Uint8Array) => Uint8Array) | undefined = nodeCrypto
  ? (key, body) => nodeCrypto.createHmac('sha256', key).update(body).digest()
  : undefined

/** SHA-256 of `body` (a string is hashed as UTF-8), if the runtime offers it. */
export const nativeSha256: ((body: string | Uint8Array) => Uint8Array) | undefined = nodeCrypto
  ? (body) => nodeCrypto.createHash('sha256').update(body).digest()
  : undefined
