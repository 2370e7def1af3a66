/**
 * A real loopback webhook receiver that verifies every signature over the raw bytes it got, for
 * tests that forward through a real collector (the interop tests with third-party SDKs, the
 * durable-mode tests). It answers `status(payload)` after `delayMs(payload)`; `attempts` holds every
 * request, `accepted` those it answered 2xx, `open` counts those not answered yet whose sender is
 * still connected (a sender that goes away first, killed or timed out, is never answered).
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifySignature } from '../../src/webhooks/index.js'

export interface ReceivedPayload {
  raw: string
  signatureValid: boolean
  /** `Date.now()` when the request's body had arrived. */
  at: number
  /** The request's headers (lowercase names). */
  headers: Record<string, string | string[] | undefined>
}

export interface SigningReceiver {
  /** `http://127.0.0.1:port/hook` */
  url: string
  attempts: ReceivedPayload[]
  accepted: ReceivedPayload[]
  readonly open: number
  close(): Promise<void>
}

export async function startSigningReceiver(options: {
  secret: string
  status?: (payload: ReceivedPayload) => number
  delayMs?: (payload: ReceivedPayload) => number
  /** A `Retry-After` (seconds) to send with the answer, if any. */
  retryAfter?: (payload: ReceivedPayload) => number | undefined
}): Promise<SigningReceiver> {
  const { secret, status = () => 200, delayMs = () => 0, retryAfter = () => undefined } = options
  const attempts: ReceivedPayload[] = []
  const accepted: ReceivedPayload[] = []
  let open = 0
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const bytes = Buffer.concat(chunks)
      void verifySignature(bytes, req.headers['x-signature'] as string | undefined, secret).then((signatureValid) => {
        const seen = { raw: bytes.toString('utf8'), signatureValid, at: Date.now(), headers: req.headers }
        attempts.push(seen)
        if (req.socket.destroyed) return
        open++
        let answered = false
        const done = () => {
          if (!answered) open--
          answered = true
        }
        const timer = setTimeout(() => {
          done()
          const code = status(seen)
          if (code < 300) accepted.push(seen)
          const seconds = retryAfter(seen)
          res.writeHead(code, seconds === undefined ? {} : { 'retry-after': String(seconds) }).end()
        }, delayMs(seen))
        res.on('close', () => {
          clearTimeout(timer)
          done()
        })
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    attempts,
    accepted,
    get open() {
      return open
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
