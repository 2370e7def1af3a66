/**
 * The admin endpoints' door: `Authorization: Bearer <admin token>`, compared in constant time, with
 * wrong tokens limited per client address. An address that sent more than `WRONG_TOKENS_PER_WINDOW`
 * wrong (or missing) tokens within `WINDOW_MS` is answered 429 with `Retry-After` until its window
 * ends, whatever it sends: answering a right token then would tell a guesser which guess was right.
 * Right tokens are never counted or delayed, so a busy console or script is never limited. One log
 * line per address and window, when it is limited.
 */
import type { Logger } from '../../logger.js'
import { requireBearer } from '../http/auth.js'
import { clientAddress } from '../http/client-address.js'
import { HttpProblem } from '../http/errors.js'

/** Wrong tokens an address may send per window before it is answered 429. */
export const WRONG_TOKENS_PER_WINDOW = 10
export const WINDOW_MS = 60_000
/** Addresses followed at once, at most: beyond, the oldest windows are forgotten first. */
const MAX_ADDRESSES = 10_000

interface Window {
  /** When this window ends (ms since the epoch). */
  ends: number
  wrong: number
}

export interface AdminGuardOptions {
  token: string
  /** Take the address from `X-Forwarded-For` (a reverse proxy in front). */
  trustProxy: boolean
  log: Logger
}

export class AdminGuard {
  private readonly windows = new Map<string, Window>()

  constructor(private readonly options: AdminGuardOptions) {}

  /** Resolves when `request` carries the admin token; else throws its 401 or 429. */
  async check(request: Request): Promise<void> {
    const address = clientAddress(request, this.options.trustProxy)
    const now = Date.now()
    let window = this.windows.get(address)
    if (window !== undefined && window.ends <= now) {
      this.windows.delete(address)
      window = undefined
    }
    if (window !== undefined && window.wrong > WRONG_TOKENS_PER_WINDOW) throw tooMany(window, now)
    try {
      await requireBearer(request, this.options.token)
    } catch (error) {
      window ??= this.open(address, now)
      window.wrong++
      if (window.wrong <= WRONG_TOKENS_PER_WINDOW) throw error
      this.options.log(`admin: ${address} sent more than ${WRONG_TOKENS_PER_WINDOW} wrong admin tokens within ${WINDOW_MS / 1000} s; answered 429 until ${new Date(window.ends).toISOString()}`)
      throw tooMany(window, now)
    }
  }

  private open(address: string, now: number): Window {
    if (this.windows.size >= MAX_ADDRESSES) {
      for (const [key, old] of this.windows) if (old.ends <= now) this.windows.delete(key)
      if (this.windows.size >= MAX_ADDRESSES) this.windows.delete(this.windows.keys().next().value as string)
    }
    const window = { ends: now + WINDOW_MS, wrong: 0 }
    this.windows.set(address, window)
    return window
  }
}

function tooMany(window: Window, now: number): HttpProblem {
  const seconds = Math.max(1, Math.ceil((window.ends - now) / 1000))
  return new HttpProblem(429, 'TOO_MANY_ATTEMPTS', `Too many wrong admin tokens from this address; retry in ${seconds} s.`, {
    headers: { 'retry-after': String(seconds) },
  })
}
