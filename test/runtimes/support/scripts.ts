/**
 * The user scripts the server-runtime tests run (Node, Bun, Deno). Arguments: the sink URL, the
 * mode (`flush`: await `client.flush()`; `exit`: never flush, rely on the exit hook) and a tag that
 * prefixes the events so one sink can serve several runs. The flush timer is set to a minute: a
 * script still running after 30 s means the timer kept the runtime alive.
 * They print `RESOLVED <file>` (where the package import resolved), `IDS [...]` (the messageIds `track` returned) and, after a flush, `FLUSH {...}`.
 */
import type { RunResult } from './runtimes.js'

const BODY = `
const [endpoint, mode, tag] = globalThis.Deno ? Deno.args : process.argv.slice(2)
const client = new Client('rt-key', { endpoint, flushAt: 100, flushAfter: 60_000 })
const ids = [1, 2, 3].map((n) => client.track({ userId: 'u-' + tag, event: tag + '-' + n, properties: { n } }).messageId)
console.log('IDS ' + JSON.stringify(ids))
`

export function esmScript(specifier: string): string {
  return `import { Client } from ${JSON.stringify(specifier)}
console.log('RESOLVED ' + import.meta.resolve(${JSON.stringify(specifier)}))
${BODY}
if (mode === 'flush') console.log('FLUSH ' + JSON.stringify(await client.flush()))
`
}

export function cjsScript(specifier: string): string {
  return `const { Client } = require(${JSON.stringify(specifier)})
console.log('RESOLVED ' + require.resolve(${JSON.stringify(specifier)}))
${BODY}
if (mode === 'flush') client.flush().then((r) => console.log('FLUSH ' + JSON.stringify(r)))
`
}

/** The messageIds a script printed. */
export function printedIds(result: RunResult): string[] {
  const line = result.stdout.split(/\r?\n/).find((l) => l.startsWith('IDS '))
  if (!line) throw new Error(`the script printed no IDS line\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`)
  return JSON.parse(line.slice(4)) as string[]
}

/** The file the script's import of the package resolved to (as a path or file: URL). */
export function printedResolution(result: RunResult): string {
  const line = result.stdout.split(/\r?\n/).find((l) => l.startsWith('RESOLVED '))
  if (!line) throw new Error(`the script printed no RESOLVED line\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`)
  return line.slice(9).replace(/^file:\/\//, '')
}

export function printedFlush(result: RunResult): unknown {
  const line = result.stdout.split(/\r?\n/).find((l) => l.startsWith('FLUSH '))
  return line ? JSON.parse(line.slice(6)) : undefined
}
