#!/usr/bin/env node
// `node scripts/walk.mjs [--max N]`: the files of src/ whose code runs when one `client.track()`
// on Node, with the default transport, goes to the request (docs/contributing.md, "The walk of
// one `track()`"), and then those that read the answer. Builds the client entry with esbuild as
// the server platform (one file, each module's code after a `// src/…` line), sends a first call
// (loading what loads lazily), then counts the functions V8 runs from a second `track()` and
// `flush()` until a receiver on 127.0.0.1 has the whole request. With `--max`, exits 1 when the
// walk to the request crosses more files than that (lint runs it: `npm run lint`).
import { mkdirSync, readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { Session } from 'node:inspector/promises'
import { dirname, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'

const { values } = parseArgs({ options: { max: { type: 'string' } } })
const max = values.max === undefined ? undefined : Number(values.max)
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const outfile = resolve(root, '.tmp/walk/index.mjs')
mkdirSync(dirname(outfile), { recursive: true })
const { version } = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'))
await build({
  entryPoints: [resolve(root, 'src/index.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  conditions: ['node'],
  outfile,
  define: { __VERSION__: JSON.stringify(version) },
  logLevel: 'error',
})

// Where each module's code starts in the bundle: esbuild writes `// src/<file>` before it.
const text = readFileSync(outfile, 'utf8')
const starts = [...text.matchAll(/^\/\/ (src\/\S+)$/gm)].map((match) => [match.index, match[1]])
const fileAt = (offset) => starts.findLast(([at]) => at <= offset)?.[1]

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false })
/** Each coverage taken resets the counts: what ran since the last one. */
const ranSince = async () => (await session.post('Profiler.takePreciseCoverage')).result

let toRequest
const server = createServer((req, res) => {
  req.resume()
  req.on('end', async () => {
    // The whole request has arrived: what ran until now is the walk to it.
    if (toRequest === null) toRequest = await ranSince()
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
})
await new Promise((listening) => server.listen(0, '127.0.0.1', listening))
const { Client } = await import(pathToFileURL(outfile).href)
const client = new Client('walk', { endpoint: `http://127.0.0.1:${server.address().port}` })
client.track({ userId: 'u1', event: 'Warmed Up', properties: { plan: 'pro' } })
await client.flush()

await ranSince()
toRequest = null
client.track({ userId: 'u1', event: 'Order Completed', properties: { revenue: 9.99 } })
await client.flush()
const answer = await ranSince()
await client.close()
server.close()

/** The files of src/ with a function that ran (the bundle's top level is left out: it ran at load). */
function files(coverage) {
  const ran = new Map()
  for (const script of coverage) {
    if (script.url !== pathToFileURL(outfile).href) continue
    for (const fn of script.functions) {
      const { startOffset, count } = fn.ranges[0]
      const file = startOffset > 0 && count > 0 ? fileAt(startOffset) : undefined
      if (file) ran.set(file, [...(ran.get(file) ?? []), fn.functionName || '(anonymous)'])
    }
  }
  return ran
}

const walk = files(toRequest)
for (const [title, ran] of [['track() to the request', walk], ['the answer, after it', files(answer)]]) {
  console.log(`${title}: ${ran.size} files`)
  for (const [file, names] of ran) console.log(`  ${file.padEnd(34)} ${[...new Set(names)].slice(0, 6).join(', ')}`)
}
if (max !== undefined && walk.size > max) {
  console.error(`walk: track() to the request crosses ${walk.size} files of src/, more than ${max}: see docs/contributing.md, "The walk of one \`track()\`".`)
  process.exit(1)
}
