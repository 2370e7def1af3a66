#!/usr/bin/env node
// Adds package-lock.json entries for optional platform packages that the registry this machine
// reaches does not serve (e.g. @deno/darwin-arm64, @rollup/rollup-win32-x64-msvc): npm cannot
// record them, and `npm ci` then refuses the lock as out of sync. Each entry states the package's
// platform (os / cpu / libc, read off its name), so npm skips it here and installs it on the
// platform it is for. Run after `npm install` changes the lock: `node scripts/lock-platform-entries.mjs`.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

const OS = { darwin: 'darwin', linux: 'linux', win32: 'win32', windows: 'win32', android: 'android', freebsd: 'freebsd', openbsd: 'openbsd', openharmony: 'openharmony' }
const CPU = { arm64: 'arm64', x64: 'x64', '64': 'x64', arm: 'arm', ia32: 'ia32', loong64: 'loong64', ppc64: 'ppc64', riscv64: 'riscv64', s390x: 's390x' }

/** os, cpu and libc of a platform package, from a name like `@rollup/rollup-linux-arm64-musl`. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-')
  const os = parts.map((p) => OS[p]).find(Boolean)
  const cpu = parts.map((p) => CPU[p]).find(Boolean)
  const libc = parts.includes('musl') ? 'musl' : parts.includes('glibc') || parts.includes('gnu') ? 'glibc' : undefined
  if (!os || !cpu) throw new Error(`cannot tell the platform of ${name}`)
  return { os: [os], cpu: [cpu], ...(libc && os === 'linux' ? { libc: [libc] } : {}) }
}

const path = new URL('../package-lock.json', import.meta.url)
const lock = JSON.parse(readFileSync(path, 'utf8'))
let added = 0
for (const entry of Object.values(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const depKey = `node_modules/${dep}`
    if (lock.packages[depKey]) continue
    lock.packages[depKey] = { version, dev: entry.dev || undefined, optional: true, ...platformOf(dep) }
    added++
  }
}
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n')
// Let npm write the file in its own order, so a later `npm install` leaves it as it is.
execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], {
  cwd: new URL('..', import.meta.url),
  stdio: 'ignore',
})
console.log(`lock-platform-entries: added ${added} entries`)
