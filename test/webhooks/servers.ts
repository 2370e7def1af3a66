/**
 * Real loopback servers for delivery tests: each records every request it receives (method,
 * path, headers and the raw body bytes) and answers from a script of replies.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, vi } from 'vitest'

export interface ReceivedRequest {
  method: string
  path: string
  headers: IncomingMessage['headers']
  raw: Buffer
}

export interface Reply {
  status: number
  headers?: Record<string, string>
  body?: string
  /** Never answer (the request hangs until the client gives up). */
  hang?: boolean
  /** Answer after this many real ms. */
  delayMs?: number
  /** Answer only once this resolves. */
  waitFor?: () => Promise<unknown>
}

export interface TestServer {
  url: string
  requests: ReceivedRequest[]
  /** Replies consumed in order; when they run out, `fallback` answers. */
  replies: Reply[]
  fallback: Reply
  /** The node:http(s) server itself. */
  server: Server
  /** Resolves when the server has received `count` requests in all. */
  received(count: number): Promise<void>
  close(): Promise<void>
}

function serve(server: Server, scheme: 'http' | 'https', fallback: Reply): Promise<TestServer> {
  const requests: ReceivedRequest[] = []
  const waiters: Array<{ count: number; resolve: () => void }> = []
  const hanging = new Set<ServerResponse>()
  const state: TestServer = {
    url: '',
    requests,
    replies: [],
    fallback,
    server,
    received: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.close(() => resolve())
        server.closeAllConnections?.()
      }),
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw: Buffer.concat(chunks) })
      for (const w of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve()
      }
      const reply = state.replies.shift() ?? state.fallback
      if (reply.hang) {
        hanging.add(res)
        return
      }
      const send = () => {
        res.writeHead(reply.status, reply.headers)
        res.end(reply.body ?? '')
      }
      if (reply.waitFor) void reply.waitFor().then(send)
      else if (reply.delayMs) setTimeoutReal(send, reply.delayMs)
      else send()
    })
  })
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo
      state.url = `${scheme}://127.0.0.1:${port}/hook`
      resolve(state)
    })
  })
}

// Captured before any test installs fake timers.
const setTimeoutReal = globalThis.setTimeout.bind(globalThis)

export function startServer(fallback: Reply = { status: 200 }): Promise<TestServer> {
  return serve(createHttpServer(), 'http', fallback)
}

export function startHttpsServer(options: { key: string | Buffer; cert: string | Buffer }, fallback: Reply = { status: 200 }): Promise<TestServer> {
  return serve(createHttpsServer(options), 'https', fallback)
}

/**
 * For a test file: `server(...)` starts a loopback server like `startServer`, and every server
 * started is closed after each test (real timers restored first, so closing can complete).
 */
export function useServers(): (...args: Parameters<typeof startServer>) => Promise<TestServer> {
  const servers: TestServer[] = []
  afterEach(async () => {
    vi.useRealTimers()
    await Promise.all(servers.splice(0).map((s) => s.close()))
  })
  return async (...args) => {
    const s = await startServer(...args)
    servers.push(s)
    return s
  }
}

/** A self-signed certificate for 127.0.0.1, made now with openssl (valid one day). */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'self-signed-'))
  try {
    execFileSync('/usr/bin/openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    ], { stdio: 'ignore' })
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
