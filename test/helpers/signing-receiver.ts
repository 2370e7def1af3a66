/**
 * A real loopback webhook receiver that verifies every signature over the raw bytes it got, for
 * tests that forward through a real collector (the interop tests with third-party SDKs, the
 * durable-mode tests). It answers `status()` after `delayMs()`; `attempts` holds every request,
 * `accepted` those it answered 2xx.
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
  close(): Promise<void>
}

export async function startSigningReceiver(options: {
  secret: string
  status?: () => number
  delayMs?: () => number
}): Promise<SigningReceiver> {
  const { secret, status = () => 200, delayMs = () => 0 } = options
  const attempts: ReceivedPayload[] = []
  const accepted: ReceivedPayload[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const bytes = Buffer.concat(chunks)
      void verifySignature(bytes, req.headers['x-signature'] as string | undefined, secret).then((signatureValid) => {
        const seen = { raw: bytes.toString('utf8'), signatureValid, at: Date.now(), headers: req.headers }
        attempts.push(seen)
        setTimeout(() => {
          const code = status()
          if (code < 300) accepted.push(seen)
          res.writeHead(code).end()
        }, delayMs())
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    attempts,
    accepted,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
