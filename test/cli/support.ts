/**
 * Shared setup of the CLI tests: the CLI built with tsup (the same tool and entry as dist/cli.js),
 * started as a child process, and a loopback webhook receiver to forward to.
 *
 * Each test file builds its own copy into a fresh directory under node_modules/.cache (so the
 * bundle resolves the package's dependencies, and a concurrent `npm run build` cannot pull it
 * away). Vitest runs test files in parallel, so a directory shared by several files would race.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import { join, resolve } from 'node:path'
import { build } from 'tsup'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { consoleAssetsEsbuild } from '../../scripts/console-assets.mjs'

const ROOT = resolve(__dirname, '../..')
const CACHE = join(ROOT, 'node_modules/.cache/isomorphic-analytics-cli-test')

export const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }

export interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
  /** Resolves with the first stdout match of `pattern`. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>
}

/**
 * Call once at the top of a test file: builds the CLI before the file's tests, kills what a test
 * left running after each, and removes the build after all. Returns `run(args, env)`, which
 * starts the CLI with `DEBUG` cleared unless `env` sets it.
 */
export function useCli(): (args: string[], env?: Record<string, string>) => Run {
  let cli = ''
  let outDir = ''
  const children: ChildProcess[] = []

  beforeAll(async () => {
    mkdirSync(CACHE, { recursive: true })
    outDir = mkdtempSync(join(CACHE, 'build-'))
    cli = join(outDir, 'cli.js')
    await build({
      entry: { cli: join(ROOT, 'src/cli/index.ts') },
      outDir,
      format: ['esm'],
      define: { __VERSION__: JSON.stringify(version) },
      target: 'es2022',
      splitting: false,
      config: false,
      esbuildPlugins: [consoleAssetsEsbuild],
      silent: true,
      clean: true,
    })
  }, 60_000)

  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  })

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true })
  })

  return (args, env = {}) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, DEBUG: '', ...env }, stdio: 'pipe' })
    children.push(child)
    return watch(child)
  }
}

function watch(child: ChildProcess): Run {
  let out = ''
  let err = ''
  const watchers: Array<() => void> = []
  child.stdout!.on('data', (chunk) => ((out += chunk), watchers.forEach((w) => w())))
  child.stderr!.on('data', (chunk) => (err += chunk))
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)))
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    waitFor: (pattern) =>
      new Promise((resolveMatch, reject) => {
        const check = () => {
          const match = out.match(pattern)
          if (match) resolveMatch(match)
        }
        watchers.push(check)
        check()
        void exit.then(() => reject(new Error(`exited before ${pattern}: ${out}\n${err}`)))
      }),
  }
}

export interface Received {
  url: string
  headers: IncomingMessage['headers']
  body: string
}

/** A loopback webhook receiver answering `status` (a number or a function of the request count). */
export async function receiver(status: number | ((n: number) => number) = 200) {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const server: Server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      received.push({ url: req.url ?? '', headers: req.headers, body })
      waiters.forEach((w) => w())
      res.statusCode = typeof status === 'number' ? status : status(received.length)
      res.end()
    })
  })
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    until: (count: number) =>
      new Promise<void>((done) => {
        const check = () => received.length >= count && done()
        waiters.push(check)
        check()
      }),
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

export const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`
