/**
 * Arguments checked before anything listens or answers. A port that is not a number was taken by
 * Node's `listen` as a pipe name (`'8701x'`: a socket file of that name in the working directory,
 * announced as `http://127.0.0.1:8701x`); `startServer(null)` and `collector.fetch(url)` failed
 * with internal TypeErrors, the latter also reported as an unexpected error and answered 500.
 */
import { existsSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, createRequestListener, isConfigError, startServer } from '../../../src/collector/index.js'
import { KEY } from '../helpers.js'

const collector = () => createCollector({ sources: [{ writeKey: KEY, name: 'web' }] })

async function refusal(run: () => unknown): Promise<{ option: string; message: string }> {
  try {
    await run()
  } catch (error) {
    expect(isConfigError(error)).toBe(true)
    return error as { option: string; message: string }
  }
  throw new Error('not refused')
}

describe('startServer and createRequestListener arguments', () => {
  it.each<[unknown, string]>([
    ['8701x', 'got `"8701x"` (a string: pass a number)'],
    ['8702', 'got `"8702"` (a string: pass a number)'],
    [1.5, 'got `1.5`'],
    [70_000, 'got `70000`'],
    [-1, 'got `-1`'],
    [null, 'got `null`'],
  ])('a port of %j is a ConfigError naming `port`, and nothing listens', async (port, got) => {
    const error = await refusal(() => startServer(collector(), { port: port as number }))
    expect(error).toMatchObject({ option: 'port', message: `Expected \`port\` to be an integer from 0 to 65535, ${got}.` })
    expect(existsSync(String(port))).toBe(false)
  })

  it.each<[unknown, string]>([
    [5, '`5`'],
    ['', '`""`'],
    [' ', '`" "`'],
  ])('a host of %j is a ConfigError naming `host`', async (host, got) => {
    const error = await refusal(() => startServer(collector(), { port: 0, host: host as string }))
    expect(error).toMatchObject({ option: 'host', message: `Expected \`host\` to be a host name or IP address (\`127.0.0.1\`, \`0.0.0.0\`, \`::\`), got ${got}.` })
  })

  it('the other options are checked too', async () => {
    expect(await refusal(() => startServer(collector(), { port: 0, maxHeaderSize: 0 }))).toMatchObject({ option: 'maxHeaderSize' })
    expect(await refusal(() => startServer(collector(), { port: 0, requestTimeout: '5s' as never }))).toMatchObject({ option: 'requestTimeout' })
    expect(await refusal(() => startServer(collector(), { port: 0, onError: 'log' as never }))).toMatchObject({ option: 'onError' })
    expect(await refusal(() => startServer(collector(), 8700 as never))).toMatchObject({ option: 'options' })
  })

  it('an unknown option is a ConfigError with a guess, not a server listening on the default port or host', async () => {
    expect(await refusal(() => startServer(collector(), { Port: 0 } as never))).toMatchObject({ option: 'Port', message: expect.stringMatching(/^Unknown option `Port` \(did you mean `port`\?\); known: port, host, maxHeaderSize, requestTimeout, onError\.$/) })
    expect(await refusal(() => startServer(collector(), { port: 0, hostname: '0.0.0.0' } as never))).toMatchObject({ option: 'hostname', message: expect.stringContaining('(did you mean `host`?)') })
    expect(await refusal(() => startServer(collector(), { prot: 1 } as never))).toMatchObject({ option: 'prot', message: expect.stringContaining('(did you mean `port`?)') })
  })

  it('no collector is an error naming the argument', async () => {
    const expected = (call: string, got: string) =>
      `Expected the first argument of \`${call}\` to be a collector (\`createCollector(…)\`) or a fetch handler \`(request) => Promise<Response>\`, got ${got}.`
    expect(await refusal(() => startServer(null as never))).toMatchObject({ option: 'collector', message: expected('startServer', '`null`') })
    expect(await refusal(() => startServer({} as never))).toMatchObject({ option: 'collector', message: expected('startServer', 'an object') })
    expect(await refusal(() => createRequestListener(undefined as never))).toMatchObject({ option: 'collector', message: expected('createRequestListener', '`undefined`') })
  })
})

describe('collector.fetch with something else than a Request', () => {
  afterEach(() => vi.restoreAllMocks())

  it('rejects with a TypeError saying so, not shown the URL, and nothing is reported', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => {})
    const reported: unknown[] = []
    const subject = createCollector({ sources: [{ writeKey: KEY, name: 'web' }], onError: (error) => reported.push(error) })
    const url = 'http://collector.test/beacon/v1/batch?writeKey=WRITEKEY_SECRET_abcd1234'
    const hint = '; for a URL, pass `new Request(url, { method, headers, body })`'
    for (const [input, got] of [
      [url, `a string${hint}`],
      [new URL(url), `a URL${hint}`],
      [undefined, '`undefined`'],
      [{ url, method: 'POST' }, 'an object without the `url`, `method` and `headers` of a Request'],
    ] as const) {
      const error = await subject.fetch(input as never).then(() => undefined, (e: unknown) => e as Error)
      expect(error).toBeInstanceOf(TypeError)
      expect(error!.message).toBe(`collector.fetch expects a Request, got ${got}.`)
    }
    expect(reported).toEqual([])
    expect(printed).not.toHaveBeenCalled()
    expect(subject.stats()).toMatchObject({ requests: 0, rejected: 0 })
    await subject.close()
  })
})
