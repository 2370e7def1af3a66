/**
 * The scratch project the docs tests run in (docs-run.test.ts: the README's code blocks;
 * examples-run.test.ts: examples/): the packed package installed by name, examples/ copied in, the
 * `redirect.mjs` preload (support/redirect.ts) and the loopback recorder it sends requests to.
 * `useDocsProject()` sets it up before the file's tests and removes it after them.
 *
 * Also the ways those tests run a script from it: to completion (`node`), or as a server until it
 * prints its URL (`whileListening`), and a signed webhook to post to such a server.
 */
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { cpSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, expect } from 'vitest'
import { REDIRECT } from './redirect.js'
import { installPacked, requireBuild, ROOT, run, scratchDir, type RunResult } from './runtimes.js'

export const ENV = {
  WRITE_KEY: 'docs-write-key',
  WEBHOOK_SECRET: 'docs-secret',
  WEBHOOK_STANDARD_SECRET: `whsec_${Buffer.from('docs standard webhooks secret 32').toString('base64')}`,
  ADMIN_TOKEN: 'docs-admin-token',
  PORT: '0',
}

/** The Standard Webhooks headers of `body`, signed with ENV.WEBHOOK_STANDARD_SECRET now. */
export function standardHeaders(body: string): Record<string, string> {
  const id = 'msg_docs'
  const timestamp = String(Math.floor(Date.now() / 1000))
  const key = Buffer.from(ENV.WEBHOOK_STANDARD_SECRET.slice('whsec_'.length), 'base64')
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` }
}

/** A request the recorder received: `https://host/path` arrives as `/host/path`. */
export interface Recorded { host: string; path: string; body: string; authorization?: string; signature?: string }

export interface DocsProject {
  /** The project's directory, every script's working directory. */
  readonly dir: string
  /** Where `redirect.mjs` sends requests (`DOCS_RECORDER`). */
  readonly recorderUrl: string
  /** Every request the recorder received, in order. */
  readonly recorded: Recorded[]
  /** Runs `node ...args` in the project to completion, with ENV and `DOCS_RECORDER` set. */
  node(args: string[], env?: Record<string, string>, timeoutMs?: number): Promise<RunResult>
  /** Starts a long-running script, calls `use` once it prints a URL, then stops it; resolves with its exit code. */
  whileListening(args: string[], use: (url: string, output: () => string) => Promise<void>, announced?: RegExp): Promise<number | null>
}

/** Sets the project up before the file's tests (writing `files` into it) and removes it after them. */
export function useDocsProject(name: string, files: Record<string, string> = {}): DocsProject {
  let scratch: ReturnType<typeof scratchDir>
  let recorder: Server | undefined
  let recorderUrl: string
  const recorded: Recorded[] = []

  beforeAll(async () => {
    requireBuild('index.js', 'cli.js', 'isomorphic-analytics.global.js')
    scratch = scratchDir(name)
    installPacked(scratch.dir)
    writeFileSync(join(scratch.dir, 'package.json'), `{ "name": "${name}", "private": true, "type": "module" }\n`)
    writeFileSync(join(scratch.dir, 'redirect.mjs'), REDIRECT)
    for (const [file, text] of Object.entries(files)) writeFileSync(join(scratch.dir, file), text)
    cpSync(join(ROOT, 'examples'), join(scratch.dir, 'examples'), { recursive: true })
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        const [, host, ...rest] = (req.url ?? '/').split('/')
        recorded.push({ host, path: `/${rest.join('/')}`, body, authorization: req.headers.authorization, signature: req.headers['x-signature'] as string | undefined })
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"success":true}')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    recorder = server
    recorderUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  }, 120_000)

  afterAll(async () => {
    // A setup that failed before the recorder started leaves nothing to close (and no callback).
    const server = recorder
    if (server) await new Promise((resolve) => server.close(resolve))
    scratch?.remove()
  })

  return {
    get dir() { return scratch.dir },
    get recorderUrl() { return recorderUrl },
    recorded,
    node: (args, env = {}, timeoutMs = 30_000) =>
      run(process.execPath, args, { cwd: scratch.dir, env: { ...ENV, DOCS_RECORDER: recorderUrl, ...env }, timeoutMs }),
    async whileListening(args, use, announced = /(http:\/\/127\.0\.0\.1:\d+\S*)/) {
      const child = spawn(process.execPath, args, { cwd: scratch.dir, env: { ...process.env, DEBUG: undefined, ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.on('data', (c: Buffer) => (output += c.toString()))
      child.stderr.on('data', (c: Buffer) => (output += c.toString()))
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
      try {
        const deadline = Date.now() + 15_000
        let url: string | undefined
        while (!(url = announced.exec(output)?.[1])) {
          if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${args.join(' ')} printed no URL:\n${output}`)
          await new Promise((r) => setTimeout(r, 20))
        }
        await use(url, () => output)
      } finally {
        child.kill('SIGTERM')
      }
      return exited
    },
  }
}

/** Fails unless the script exited 0 and wrote nothing to stderr. */
export const clean = (result: RunResult, what: string) => {
  expect(result.stderr, `${what} wrote to stderr`).toBe('')
  expect(result.code, `${what} exited with ${result.code}\n${result.stdout}`).toBe(0)
}

/**
 * Posts a track message signed with ENV.WEBHOOK_SECRET and ENV.WEBHOOK_STANDARD_SECRET (both
 * schemes), as the collector forwards it; resolves with the status.
 */
export async function postSignedTrack(url: string): Promise<number> {
  const body = JSON.stringify({ version: 1, type: 'track', messageId: 'm-1', userId: 'user-1', event: 'Docs Ran', properties: {}, timestamp: new Date().toISOString(), context: {} })
  const signature = createHmac('sha1', ENV.WEBHOOK_SECRET).update(body).digest('hex')
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-signature': signature, ...standardHeaders(body) } })
  return response.status
}

/** Waits (up to 10 s) until the output matches `pattern`. */
export async function untilOutput(output: () => string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 10_000
  while (!pattern.test(output())) {
    if (Date.now() > deadline) throw new Error(`expected ${pattern} in:\n${output()}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
