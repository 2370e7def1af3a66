/**
 * Real queue servers for the durable-collector tests and benches: redis-server (and PostgreSQL) started on a
 * free loopback port with a temporary data directory, stopped afterwards. A missing binary fails
 * loudly with the command that installs it: these tests never skip.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, chownSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function requireBinary(path, install) {
  if (!existsSync(path)) throw new Error(`${path} is missing; install it with: ${install}`)
  return path
}

const REDIS = '/usr/bin/redis-server'

/**
 * A fresh redis-server; `port` and `dir` let a test restart one on the same port and data. It
 * runs as the collector asks (append-only file on, `noeviction`); `persistence: false` runs it
 * with none (`--save "" --appendonly no`), which the collector warns about; `args`: more flags.
 */
export async function startRedis(options = {}) {
  const binary = requireBinary(REDIS, 'apt-get install -y redis-server')
  const port = options.port ?? (await freePort())
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ia-redis-'))
  const persistence = options.persistence === false ? ['--appendonly', 'no'] : ['--appendonly', 'yes']
  const child = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', ...persistence, '--protected-mode', 'no', ...(options.args ?? [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  await waitForOutput(child, /Ready to accept connections/, 'redis-server')
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    // One process: stopped, it still accepts connections (the kernel does) and answers nothing.
    freeze: (on) => child.kill(on ? 'SIGSTOP' : 'SIGCONT'),
    stop: () => {
      child.kill('SIGCONT')
      return stopChild(child, () => options.dir === undefined && rmSync(dir, { recursive: true, force: true }))
    },
  }
}

const PG_BIN = '/usr/lib/postgresql/15/bin'

/**
 * A fresh PostgreSQL cluster (on `options.port`, else a free one). PostgreSQL refuses to run as root, so when the tests run as root
 * initdb and postgres run as the `postgres` user, in a temporary directory it owns.
 */
export async function startPostgres(options = {}) {
  const initdb = requireBinary(join(PG_BIN, 'initdb'), 'apt-get install -y postgresql')
  const postgres = requireBinary(join(PG_BIN, 'postgres'), 'apt-get install -y postgresql')
  const port = options.port ?? (await freePort())
  // `options.dir` (from a stopped server's `dir`): its cluster again, data kept.
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'ia-pg-'))
  const asRoot = process.getuid?.() === 0
  const wrap = (command, args) => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args])
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' })
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' })
    if (ids.status !== 0) throw new Error('user postgres is missing; install it with: apt-get install -y postgresql')
    chownSync(dir, Number(ids.stdout), Number(gid.stdout))
  }
  const data = join(dir, 'data')
  const [cmd, args] = wrap(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync'])
  const init = existsSync(data) ? { status: 0 } : spawnSync(cmd, args, { encoding: 'utf8' })
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`)
  const [pcmd, pargs] = wrap(postgres, ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'])
  const child = spawn(pcmd, pargs, { stdio: ['ignore', 'pipe', 'pipe'] })
  await waitForOutput(child, /ready to accept connections/, 'postgres')
  let frozen = false
  let everFrozen = false
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dir,
    freeze: (on) => {
      frozen = on
      everFrozen ||= on
      signalPostgres(data, on ? 'SIGSTOP' : 'SIGCONT')
      // runuser stops itself when its child stops (as su does), and must go on too.
      if (!on) child.kill('SIGCONT')
    },
    stop: () => {
      // A frozen server would never end.
      if (frozen) {
        signalPostgres(data, 'SIGCONT')
        child.kill('SIGCONT')
      }
      // runuser, resumed, may miss a SIGTERM (it waits for its child again without looking):
      // the postmaster is told itself, and runuser ends with it.
      // A cluster kept for a restart (`options.dir`) is shut down fast (SIGINT: sessions ended,
      // data written), and is stopped once its lock file is gone, so the next start can take it.
      const kept = options.dir !== undefined
      const kill = everFrozen || kept ? () => process.kill(postmasterPid(data), kept ? 'SIGINT' : 'SIGTERM') : undefined
      return stopChild(child, () => !kept && rmSync(dir, { recursive: true, force: true }), kill).then(() => kept && gone(join(data, 'postmaster.pid')))
    },
  }
}

/** Resolves once `path` no longer exists (within 10 s, else rejects). */
async function gone(path) {
  for (const deadline = Date.now() + 10_000; existsSync(path); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error(`${path} still exists after 10 s`)
  }
}

/** A cluster's postmaster: the first line of its postmaster.pid. */
const postmasterPid = (data) => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])

/**
 * SIGSTOP or SIGCONT to a cluster's postmaster and every process it forked (backends included).
 * Stopped, the server still accepts connections (the kernel does, into the listen backlog) and
 * answers nothing: a server that hangs.
 */
function signalPostgres(data, signal) {
  const postmaster = postmasterPid(data)
  const children = () => spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number)
  // The postmaster first when stopping (it forks no backend after), last when resuming.
  if (signal === 'SIGSTOP') process.kill(postmaster, signal)
  for (const pid of children()) process.kill(pid, signal)
  if (signal === 'SIGCONT') process.kill(postmaster, signal)
}

function waitForOutput(child, pattern, name) {
  return new Promise((resolve, reject) => {
    let output = ''
    const onData = (chunk) => {
      output += chunk.toString()
      if (pattern.test(output)) resolve()
    }
    child.stdout?.on('data', onData)
    child.stderr?.on('data', onData)
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${output}`)))
    child.on('error', reject)
  })
}

function stopChild(child, cleanup, kill = () => child.kill('SIGTERM')) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      cleanup()
      return resolve()
    }
    child.once('exit', () => {
      cleanup()
      resolve()
    })
    kill()
  })
}
