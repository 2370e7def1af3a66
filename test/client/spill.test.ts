/**
 * Option `spill`, with real processes (../helpers/child-client.ts): a child that exits by
 * `process.exit` (or a host's SIGTERM handler that calls it, as `next start` does) with messages
 * queued and in flight writes them to the spill directory; the next child made with that
 * directory sends them, once. Without the option, or where the directory cannot be written,
 * the loss is reported.
 */
import type { ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { until } from '../helpers/until.js'
import { startChildClientKit, type ChildClientKit } from '../helpers/child-client.js'
import { keyTag } from '../../src/platform/spill.js'

let kit: ChildClientKit
let spill: string

beforeAll(async () => {
  kit = await startChildClientKit()
})

afterEach(() => {
  kit.reset()
  rmSync(spill, { recursive: true, force: true })
})

afterAll(() => kit.close())

let runs = 0
const newSpillDir = () => (spill = join(kit.dir, `spill-${++runs}`))

/**
 * A script that tracks `Event 0` and `Event 1` (a full batch: sent, and held unanswered by the
 * server) and `Event 2` (queued), then waits for a line on stdin and runs `exit`.
 */
function holdingScript(options: string, exit: string): string {
  return `
    const client = new Client('KEY', { endpoint, flushAt: 2, flushAfter: 600000, ${options} })
    client.on('error', (error) => console.log(JSON.stringify({ code: error.code, message: error.message, events: error.messages.map((m) => m.event) })))
    for (let i = 0; i < 3; i++) client.track({ event: 'Event ' + i, userId: 'u' })
    process.stdin.once('data', () => { ${exit} })
  `
}

/** Starts a holding script and, once its batch is held by the server, tells it to go on. */
async function holdThenGo(name: string, options: string, exit = 'process.exit(0)'): Promise<ChildProcess> {
  kit.answers = ['hang']
  const child = kit.start(name, holdingScript(options, exit))
  await until(() => kit.hung === 1, 'the first batch to reach the server', 10_000)
  child.stdin!.write('go\n')
  return child
}

const spilledFiles = () => (existsSync(spill) ? readdirSync(spill) : [])
const spilledEvents = () => spilledFiles().flatMap((name) => readFileSync(join(spill, name), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { event: string }).event))
const receivedEvents = () => kit.received.flatMap((b) => b.batch.map((m) => m.event)).sort()

/** A later process with the same spill directory: sends what it finds, and closes. */
const sender = (name: string, key = 'KEY') => kit.run(name, `
  const client = new Client(${JSON.stringify(key)}, { endpoint, spill: { dir: ${JSON.stringify(spill)} } })
  client.on('error', (error) => console.log('error ' + error.message))
  await new Promise((resolve) => setImmediate(resolve))
  console.log(JSON.stringify(await client.close()))
`)

describe('option spill (real node, real loopback server)', () => {
  it('process.exit with messages queued and in flight (Node transport): spilled, then sent once by the next process', async () => {
    newSpillDir()
    const exited = await kit.ended(await holdThenGo('exit-node-transport', `spill: { dir: ${JSON.stringify(spill)} }`))
    expect(exited).toMatchObject({ code: 0, stdout: '', stderr: '' })
    expect(spilledFiles()).toHaveLength(1)
    expect(spilledFiles()[0]).toMatch(/^isomorphic-analytics-[0-9a-f]{8}-\d+-\d+-0\.jsonl$/)
    expect(spilledEvents().sort()).toEqual(['Event 0', 'Event 1', 'Event 2'])

    const next = await sender('sender-node-transport')
    expect(next).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(next.stdout)).toEqual({ delivered: 3, failed: 0 })
    expect(receivedEvents()).toEqual(['Event 0', 'Event 1', 'Event 2'])
    expect(spilledFiles()).toEqual([])

    // Once: a third process finds nothing to send.
    const third = await sender('sender-again')
    expect(JSON.parse(third.stdout)).toEqual({ delivered: 0, failed: 0 })
    expect(kit.received).toHaveLength(1)
  }, 30_000)

  it('the same with a fetch of the user\'s (messages held as text)', async () => {
    newSpillDir()
    const exited = await kit.ended(await holdThenGo('exit-fetch', `fetch: globalThis.fetch, spill: { dir: ${JSON.stringify(spill)} }`))
    expect(exited).toMatchObject({ code: 0, stdout: '', stderr: '' })
    expect(spilledEvents().sort()).toEqual(['Event 0', 'Event 1', 'Event 2'])
    const next = await sender('sender-fetch')
    expect(JSON.parse(next.stdout)).toEqual({ delivered: 3, failed: 0 })
    expect(receivedEvents()).toEqual(['Event 0', 'Event 1', 'Event 2'])
  }, 30_000)

  it('SIGTERM answered by the host with process.exit(143), as `next start` does: spilled', async () => {
    newSpillDir()
    kit.answers = ['hang']
    const child = kit.start('sigterm', holdingScript(`spill: { dir: ${JSON.stringify(spill)} }`, '') + `
      process.on('SIGTERM', () => process.exit(143))
      console.log('ready')
    `)
    await until(() => kit.hung === 1, 'the first batch to reach the server', 10_000)
    child.kill('SIGTERM')
    const exited = await kit.ended(child)
    expect(exited).toMatchObject({ code: 143, stderr: '' })
    expect(spilledEvents().sort()).toEqual(['Event 0', 'Event 1', 'Event 2'])
    const next = await sender('sender-sigterm')
    expect(JSON.parse(next.stdout)).toEqual({ delivered: 3, failed: 0 })
  }, 30_000)

  it('another write key\'s spill is left alone', async () => {
    newSpillDir()
    await kit.ended(await holdThenGo('exit-other-key', `spill: { dir: ${JSON.stringify(spill)} }`))
    const other = await sender('sender-other-key', 'OTHER-KEY')
    expect(JSON.parse(other.stdout)).toEqual({ delivered: 0, failed: 0 })
    expect(spilledFiles()).toHaveLength(1)
  }, 30_000)

  it('two processes starting together with one spill: each file is sent by one of them', async () => {
    newSpillDir()
    mkdirSync(spill, { recursive: true })
    // Three files, as three exited processes would leave them.
    for (let n = 0; n < 3; n++) {
      const lines = [0, 1].map((i) => JSON.stringify({ type: 'track', event: `File ${n} Event ${i}`, userId: 'u', messageId: `m-${n}-${i}`, timestamp: '2026-11-28T00:00:00.000Z' }))
      writeFileSync(join(spill, `isomorphic-analytics-${keyTag('KEY')}-1${n}-1-0.jsonl`), lines.join('\n') + '\n')
    }
    const [a, b] = await Promise.all([sender('together-a'), sender('together-b')])
    const delivered = [a, b].map((r) => (JSON.parse(r.stdout) as { delivered: number }).delivered)
    expect(delivered[0]! + delivered[1]!).toBe(6)
    expect(receivedEvents()).toHaveLength(6)
    expect(new Set(receivedEvents()).size).toBe(6)
    expect(spilledFiles()).toEqual([])
  }, 30_000)

  it('without the option, messages held at process.exit are reported lost, naming the option', async () => {
    const exited = await kit.ended(await holdThenGo('exit-no-spill', ''))
    expect(exited.code).toBe(0)
    const report = JSON.parse(exited.stdout) as { code: string; message: string; events: string[] }
    expect(report.code).toBe('ABORTED')
    expect(report.message).toBe('The process exited with 3 messages not delivered (set option `spill` to keep them for the next process).')
    expect(report.events.sort()).toEqual(['Event 0', 'Event 1', 'Event 2'])
  }, 30_000)

  it('without an error listener, the loss goes to stderr', async () => {
    kit.answers = ['hang']
    const child = kit.start('exit-no-listener', `
      const client = new Client('KEY', { endpoint, flushAt: 1 })
      client.track({ event: 'Lost', userId: 'u' })
      process.stdin.once('data', () => process.exit(0))
    `)
    await until(() => kit.hung === 1, 'the batch to reach the server', 10_000)
    child.stdin!.write('go\n')
    const exited = await kit.ended(child)
    expect(exited.code).toBe(0)
    expect(exited.stderr).toContain('1 message not delivered: The process exited with 1 message not delivered')
  }, 30_000)

  it('a spill directory that cannot be made is reported at once, and the loss at exit', async () => {
    newSpillDir()
    mkdirSync(kit.dir, { recursive: true })
    const file = join(kit.dir, `not-a-directory-${runs}`)
    writeFileSync(file, '')
    const exited = await kit.ended(await holdThenGo('exit-bad-dir', `spill: { dir: ${JSON.stringify(join(file, 'spill'))} }`))
    expect(exited.code).toBe(0)
    const reports = exited.stdout.trim().split('\n').map((line) => JSON.parse(line) as { code: string; message: string; events: string[] })
    expect(reports[0]!.code).toBe('CONFIG')
    expect(reports[0]!.message).toContain(`Cannot use the spill directory ${join(file, 'spill')}: ENOTDIR`)
    expect(reports[1]!.message).toBe(`The process exited with 3 messages not delivered (the spill directory ${join(file, 'spill')} could not be used).`)
    expect(reports[1]!.events).toHaveLength(3)
  }, 30_000)

  it('a spill directory removed before the exit: the failed write is reported with the messages', async () => {
    newSpillDir()
    const exited = await kit.ended(await holdThenGo('exit-dir-gone', `spill: { dir: ${JSON.stringify(spill)} }`, `process.getBuiltinModule('node:fs').rmSync(${JSON.stringify(spill)}, { recursive: true }); process.exit(0)`))
    expect(exited.code).toBe(0)
    const report = JSON.parse(exited.stdout) as { code: string; message: string; events: string[] }
    expect(report.message).toMatch(new RegExp(`^The process exited with 3 messages not delivered \\(spilling them to ${spill} failed: ENOENT`))
    expect(report.events).toHaveLength(3)
  }, 30_000)

  it('a client closed and settled leaves nothing to spill or report', async () => {
    newSpillDir()
    const exited = await kit.run('closed-then-exit', `
      const client = new Client('KEY', { endpoint, spill: { dir: ${JSON.stringify(spill)} } })
      client.on('error', (error) => console.log('error ' + error.message))
      client.track({ event: 'Delivered', userId: 'u' })
      await client.close()
      process.exit(0)
    `)
    expect(exited).toMatchObject({ code: 0, stdout: '', stderr: '' })
    expect(spilledFiles()).toEqual([])
    expect(receivedEvents()).toEqual(['Delivered'])
  }, 30_000)
})

