/**
 * Secrets in the CLI's output, as a reviewer found them printed beyond their last four characters:
 * a queue server's password (in the userinfo or `?password=`), the password of a webhook URL that
 * is not http(s), the value of an unquoted `--header`, a numeric write key or admin token in
 * `--config`, and the text JSON.parse quotes when a `--config` file is not JSON. The CLI runs as a
 * child process; the queue server is a real redis-server (it needs no password, and takes one).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedis, type QueueServerProcess } from '../helpers/queue-servers.js'
import { useCli } from './support.js'

const run = useCli()
const USAGE = 'Run "isomorphic-analytics collect --help" for usage.\n'

/** Runs the CLI, expects exit 2, and returns its complaint (without the usage line). */
async function refusal(args: string[]): Promise<string> {
  const cli = run(args)
  expect(await cli.exit).toBe(2)
  expect(cli.stderr().endsWith(USAGE)).toBe(true)
  return cli.stderr().slice(0, -USAGE.length).replace(/^isomorphic-analytics: /, '').trimEnd()
}

describe('the CLI shows no secret beyond its last four characters', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ia-cli-secrets-'))
  let redis: QueueServerProcess
  beforeAll(async () => void (redis = await startRedis()), 30_000)
  afterAll(async () => {
    await redis?.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const configFile = (name: string, text: string) => {
    const path = join(dir, name)
    writeFileSync(path, text)
    return path
  }

  it("masks the --queue URL's password, in the userinfo and in ?password=", async () => {
    const port = new URL(redis.url).port
    const queue = `redis://:USERINFO_SECRET_1234@127.0.0.1:${port}/?password=QUERY_SECRET_9876`
    const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--queue', queue])
    await cli.waitFor(/Press Ctrl\+C/)
    cli.child.kill('SIGTERM')
    expect(await cli.exit).toBe(0)
    expect(cli.stdout()).toContain(`  deliveries: queue server redis://:…1234@127.0.0.1:${port}/?password=…9876 (shared with every collector on it)\n`)
    expect(cli.stdout() + cli.stderr()).not.toMatch(/USERINFO_SECRET|QUERY_SECRET/)
  }, 30_000)

  it("masks the password of a --webhook URL that is not http(s)", async () => {
    expect(await refusal(['collect', '--write-key', 'K', '--webhook', 'ftp://u:PASSWORD_SECRET_1234@h.example.com/']))
      .toBe('Expected `--webhook` to use http or https, got `ftp:` in `"ftp://u:…1234@h.example.com/"`.')
  })

  it('an unquoted --header value: says to quote the header whole, without printing the value', async () => {
    expect(await refusal(['collect', '--write-key', 'K', '--webhook', 'https://h.example.com', '--header', 'X-Api-Key:', 'APIKEY_SECRET_7777']))
      .toBe("Unexpected argument after --header X-Api-Key (not shown: it may be a credential); a header is one argument, its value quoted with its name: --header 'X-Api-Key: value'.")
    expect(await refusal(['collect', '--write-key', 'K', '--webhook', 'https://h.example.com', '--shared-secret', 'two', 'SECRET_WORDS']))
      .toBe('Unexpected argument after --shared-secret SECRET (not shown: it may be part of a secret); quote a value that holds spaces.')
    // Not after a flag's value: shown, as before.
    expect(await refusal(['collect', 'extra'])).toBe('Unexpected argument "extra".')
  })

  it('a numeric write key or admin token in --config shows its last four digits only, as a shared secret does', async () => {
    const adminToken = configFile('admin.json', JSON.stringify({ sources: [{ writeKey: 'k', name: 'a' }], adminToken: 12345678901234 }))
    expect(await refusal(['collect', '--config', adminToken]))
      .toBe('Expected `adminToken` to be a non-empty string, got a number (`…1234`; not shown in full: it may be a credential).')
    const writeKey = configFile('key.json', JSON.stringify({ sources: [{ writeKey: 123456789012345, name: 'a' }] }))
    expect(await refusal(['collect', '--config', writeKey]))
      .toBe('Expected `sources[0].writeKey` to be a non-empty string, got a number (`…2345`; not shown in full: it may be a credential).')
  })

  it('a --config file that is not JSON: the position of the problem, not the text around it', async () => {
    const path = configFile('syntax.json', '{\n  "sources": [{ "name": "a", "writeKey":WRITEKEY_SECRET_abcd1234 }]\n}\n')
    expect(await refusal(['collect', '--config', path]))
      .toBe(`--config: ${path} is not valid JSON: expected a value (an object, array, string, number, true, false or null) at position 42 (line 2, column 41).`)
  })
})
