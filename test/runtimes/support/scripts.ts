/**
 * The user scripts the server-runtime tests run (Node, Bun, Deno). Arguments: the sink URL, the
 * mode (`flush`: await `client.flush()`; `exit`: never flush, rely on the exit hook) and a tag that
 * prefixes the events so one sink can serve several runs. The flush timer is set to a minute: a
 * script still running after 30 s means the timer kept the runtime alive.
 * They print `RESOLVED <file>` (where the package import resolved), `IDS [...]` (the messageIds `track` returned) and, after a flush, `FLUSH {...}`.
 */
import { expect } from 'vitest'
import type { RunResult } from './runtimes.js'
import { UUID_V4, type Sink } from './sink.js'

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

/**
 * The three events a script tracked (tagged `tag`) arrived at `sink`, all of them, in the server
 * form (JSON with Basic auth, no `writeKey` in the body); after `flush`, the script saw them
 * delivered. The script has exited, so everything it sent has arrived.
 */
export function expectScriptDelivered(result: RunResult, sink: Sink, tag: string, mode: string): void {
  const ids = printedIds(result)
  expect(ids).toHaveLength(3)
  for (const id of ids) expect(id).toMatch(UUID_V4)
  if (mode === 'flush') expect(printedFlush(result)).toEqual({ delivered: 3, failed: 0 })
  const received = sink.messages().filter((m) => m.event?.startsWith(`${tag}-`))
  expect(received.map((m) => m.messageId).sort()).toEqual([...ids].sort())
  const request = sink.batches().find((r) => r.body?.batch.some((m) => ids.includes(m.messageId)))!
  expect(request.headers['content-type']).toBe('application/json')
  expect(request.headers.authorization).toBe(`Basic ${btoa('rt-key:')}`)
  expect(request.body?.writeKey).toBeUndefined()
  expect(request.body?.context?.library?.name).toBe('isomorphic-analytics')
}
