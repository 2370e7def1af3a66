/**
 * The Next.js fixture (../nextjs-app/) as a user's project: its dependencies installed from the npm
 * registry once into `.runtimes/nextjs-<key>/` (the key: a hash of the fixture's package.json, the
 * package's own `dependencies` and the Node major, so a second run does not reinstall), the fixture's
 * files copied in fresh and the packed package unpacked into its node_modules on every run; then
 * `next build` and `next start` as child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { until } from '../../helpers/until.js'
import { packTarball, requireBuild, ROOT, run, unpackTarball, type RunResult } from '../../runtimes/support/runtimes.js'

export const FIXTURE = join(ROOT, 'test/frameworks/nextjs-app')

/** Next's own telemetry off; nothing else from the environment that changes a build. */
const NEXT_ENV = { NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: undefined, WRITE_KEY: undefined, ANALYTICS_ENDPOINT: undefined }

export interface NextProject {
  readonly dir: string
  /** Whether this run installed the dependencies (false: taken from the cache). */
  readonly installed: boolean
  /** How long installing and unpacking took, ms. */
  readonly setupMs: number
}

/** The cache directory's key: what decides which packages npm would install. */
function cacheKey(manifest: string): string {
  const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  return createHash('sha256').update(JSON.stringify([manifest, dependencies, process.versions.node.split('.')[0]])).digest('hex').slice(0, 12)
}

/**
 * The project, ready to build: dependencies from the cache (installed first when missing), the
 * fixture's files, and the package packed from this repo's dist/.
 */
export async function prepareNextProject(): Promise<NextProject> {
  const started = Date.now()
  requireBuild('index.js', 'index.browser.js', 'collector.js')
  const manifest = readFileSync(join(FIXTURE, 'package.json'), 'utf8')
  const dir = join(ROOT, '.runtimes', `nextjs-${cacheKey(manifest)}`)
  const done = join(dir, '.installed')
  let installed = false
  if (!existsSync(done)) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    // The package's own dependencies beside the app's: the tarball is unpacked, not installed.
    const pkg = JSON.parse(manifest) as { dependencies: Record<string, string> }
    const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ ...pkg, dependencies: { ...pkg.dependencies, ...dependencies } }, null, 2))
    // --ignore-scripts: nothing but the registry is reached (sharp's check, Next's optional image
    // optimiser, is not needed).
    const result = await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], { cwd: dir, timeoutMs: 600_000 })
    if (result.code !== 0) throw new Error(`npm install in ${dir} failed\n${result.stdout}\n${result.stderr}`)
    // Without its lockfile, Next finds one lockfile above the app (the repo's), not two, and
    // has no "inferred your workspace root" warning to give.
    rmSync(join(dir, 'package-lock.json'))
    writeFileSync(done, `${new Date().toISOString()}\n`)
    installed = true
  }
  // The fixture's files, fresh: what an earlier run built or spilled goes.
  for (const name of readdirSync(dir)) {
    if (!['node_modules', 'package.json', 'package-lock.json', '.installed'].includes(name)) rmSync(join(dir, name), { recursive: true, force: true })
  }
  for (const name of readdirSync(FIXTURE)) {
    if (name !== 'package.json' && name !== 'node_modules' && name !== '.next') cpSync(join(FIXTURE, name), join(dir, name), { recursive: true })
  }
  const tarball = packTarball(dir)
  unpackTarball(tarball, dir)
  rmSync(tarball)
  return { dir, installed, setupMs: Date.now() - started }
}

export type Bundler = 'webpack' | 'turbopack'

/** `next build` with webpack or Turbopack; .next/ from an earlier build is removed first. */
export async function nextBuild(dir: string, bundler: Bundler): Promise<RunResult> {
  rmSync(join(dir, '.next'), { recursive: true, force: true })
  const args = [join(dir, 'node_modules/next/dist/bin/next'), 'build', ...(bundler === 'webpack' ? ['--webpack'] : [])]
  return run(process.execPath, args, { cwd: dir, env: NEXT_ENV, timeoutMs: 600_000 })
}

export interface NextServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string
  /** Everything it printed so far, stdout and stderr. */
  output(): string
  /** Sends `signal` to `next start` and resolves once it (and its server process) exited. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

/** `next start` on a free loopback port (`-p 0`: Next prints the one it got), with `env` added. */
export async function nextStart(dir: string, env: Record<string, string>): Promise<NextServer> {
  const child: ChildProcess = spawn(process.execPath, [join(dir, 'node_modules/next/dist/bin/next'), 'start', '-H', '127.0.0.1', '-p', '0'], {
    cwd: dir,
    env: { ...process.env, DEBUG: undefined, ...NEXT_ENV, ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })))
  let ended = false
  void exited.then(() => (ended = true))
  await until(() => ended || /Ready in/.test(output), '`next start` to be ready', 60_000, { progress: () => output })
  const url = /Local:\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
  if (ended || !url) throw new Error(`next start did not start\n${output}`)
  return {
    url,
    output: () => output,
    async stop(signal) {
      if (!ended) child.kill(signal)
      return exited
    },
  }
}
