/**
 * The client in a child Node process, against a real loopback HTTP server in this one: for the
 * promises that hold when a process ends (exit-safety.test.ts, spill.test.ts), which the test
 * runner's own event loop would hide. The client is bundled from src with esbuild, as the
 * published build is. Nothing here waits on wall-clock time: a child that never exits fails by
 * the test's timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'

const root = new URL('../../', import.meta.url).pathname
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }

export interface ReceivedBatch {
  batch: Array<{ messageId: string; event: string; [key: string]: unknown }>
}

export interface ChildResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface ChildClientKit {
  /** The loopback server's base URL (a script sees it as `endpoint`). */
  readonly endpoint: string
  /** A temporary directory of this kit's own (scripts and anything a test writes there). */
  readonly dir: string
  /** The next answers, in order: a status, or `'hang'` (never answered). Then 200. */
  answers: Array<number | 'hang'>
  /** `Retry-After` sent with every answer that is not 200. */
  retryAfter: string | undefined
  /** Bodies answered 200. */
  readonly received: ReceivedBatch[]
  /** Requests held unanswered (`'hang'`). */
  readonly hung: number
  /** Starts a script (ESM; `Client` and `endpoint` in scope) in a child Node process. */
  start(name: string, body: string, nodeFlags?: string[]): ChildProcess
  /** Runs a script to its end: its exit code or signal and its output. */
  run(name: string, body: string, nodeFlags?: string[]): Promise<ChildResult>
  /** Its exit code or signal and its output, once `child` has exited. */
  ended(child: ChildProcess): Promise<ChildResult>
  /** Kills children left running, drops held requests, and clears answers and what was received. */
  reset(): void
  close(): Promise<void>
}

export async function startChildClientKit(): Promise<ChildClientKit> {
  const dir = mkdtempSync(join(tmpdir(), 'child-client-'))
  await build({
    entryPoints: [join(root, 'src/index.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(dir, 'client.mjs'),
    define: { __VERSION__: JSON.stringify(version) },
    logLevel: 'silent',
  })
  const held: ServerResponse[] = []
  const children: ChildProcess[] = []
  const outputs = new WeakMap<ChildProcess, { stdout: string; stderr: string }>()
  let server: Server
  const kit: ChildClientKit = {
    endpoint: '',
    dir,
    answers: [],
    retryAfter: undefined,
    received: [],
    get hung() {
      return held.length
    },
    start(name, body, nodeFlags = []) {
      const file = join(dir, `${name}.mjs`)
      writeFileSync(file, `import { Client } from './client.mjs'\nconst endpoint = ${JSON.stringify(kit.endpoint)}\n${body}\n`)
      const child = spawn(process.execPath, [...nodeFlags, file], { env: { ...process.env, DEBUG: '' }, stdio: ['pipe', 'pipe', 'pipe'] })
      children.push(child)
      const output = { stdout: '', stderr: '' }
      outputs.set(child, output)
      child.stdout!.on('data', (chunk) => (output.stdout += chunk))
      child.stderr!.on('data', (chunk) => (output.stderr += chunk))
      return child
    },
    run(name, body, nodeFlags) {
      return kit.ended(kit.start(name, body, nodeFlags))
    },
    ended(child) {
      const output = outputs.get(child)!
      const result = () => ({ code: child.exitCode, signal: child.signalCode, ...output })
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(result())
      // 'close': its output is all read by then.
      return new Promise((resolve) => child.once('close', () => resolve(result())))
    },
    reset() {
      for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      for (const res of held.splice(0)) res.destroy()
      kit.answers = []
      kit.retryAfter = undefined
      kit.received.length = 0
    },
    async close() {
      kit.reset()
      await new Promise((resolve) => server.close(resolve))
      rmSync(dir, { recursive: true, force: true })
    },
  }
  server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      const answer = kit.answers.shift() ?? 200
      if (answer === 'hang') return void held.push(res)
      if (answer === 200) kit.received.push(JSON.parse(body) as ReceivedBatch)
      const headers = { 'content-type': 'application/json', ...(answer !== 200 && kit.retryAfter ? { 'retry-after': kit.retryAfter } : {}) }
      res.writeHead(answer, headers).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  ;(kit as { endpoint: string }).endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return kit
}
