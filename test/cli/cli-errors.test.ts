/**
 * The CLI's error messages, as a new user meets them: advice given once, mistyped flags and keys
 * with a guess, missing values in plain words, and values from flags named as the flags (values
 * from --config keep their JSON paths). Every refusal exits 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { closest } from '../../src/closest.js'
import { useCli } from './support.js'

const run = useCli()
const USAGE = 'Run "isomorphic-analytics collect --help" for usage.\n'
const HOOK = 'http://127.0.0.1:1/hook'

/** Runs the CLI, expects exit 2, and returns its one line of complaint (without the usage line). */
async function refusal(args: string[], env: Record<string, string> = {}): Promise<string> {
  const cli = run(args, env)
  expect(await cli.exit).toBe(2)
  expect(cli.stderr().endsWith(USAGE)).toBe(true)
  expect(cli.stderr().split('collect --help')).toHaveLength(2)
  return cli.stderr().slice(0, -USAGE.length).replace(/^isomorphic-analytics: /, '').trimEnd()
}

describe('CLI error messages', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ia-cli-errors-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const configFile = (name: string, config: unknown) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(config))
    return path
  }

  it('without a command, points to --help once', async () => {
    expect(await refusal([])).toBe('Missing command; the command is "collect".')
  })

  it.each<[string[], string]>([
    [['collect', '--writekey', 'KEY'], 'Unknown option --writekey (did you mean --write-key?).'],
    [['collect', '--writeKey=KEY'], 'Unknown option --writeKey (did you mean --write-key?).'],
    [['collect', '--write-key', 'K', '--prot', '1'], 'Unknown option --prot (did you mean --port?).'],
    [['collect', '--write-key', 'K', '--webhooks', HOOK], 'Unknown option --webhooks (did you mean --webhook?).'],
    [['collect', '--write-key', 'K', '--token', 'T'], 'Unknown option --token (did you mean --admin-token?).'],
    [['collect', '--verbose'], 'Unknown option --verbose.'],
    [['collect', '-x'], 'Unknown option -x.'],
    [['collect', '--write-key'], '--write-key needs a value (--write-key KEY).'],
    [['collect', '--write-key', 'K', '--port'], '--port needs a value (--port N).'],
    [['--help=yes'], '--help takes no value.'],
  ])('a mistyped flag: %j', async (args, message) => {
    expect(await refusal(args)).toBe(message)
  })

  it('a flag whose value looks like a flag: says how to pass it, without printing it', async () => {
    const message = await refusal(['collect', '--write-key', 'K', '--admin-token', '-s3cret-token'])
    expect(message).toBe('--admin-token needs a value (--admin-token TOKEN); the argument after it starts with "-", so it is read as an option. If that is the value, write --admin-token=VALUE.')
  })

  it.each<[string, string[], string]>([
    ['a webhook that is not http(s)', ['--webhook', 'ftp://x/'], 'Expected `--webhook` to use http or https, got `ftp:` in `"ftp://x/"`.'],
    ['the 2nd of two webhooks', ['--webhook', HOOK, '--webhook', 'hook.example'], 'Expected the 2nd `--webhook` to be an absolute http(s) URL, got `"hook.example"`.'],
    ['a webhook with credentials', ['--webhook', 'http://u:p@127.0.0.1:1/'], 'Expected `--webhook` to carry no credentials; send them in a static header instead.'],
    ['six webhooks', Array.from({ length: 6 }, () => ['--webhook', HOOK]).flat(), '--webhook is given 6 times; a source forwards to at most 5 URLs.'],
    ['a reserved header', ['--webhook', HOOK, '--header', 'User-Agent:me'], 'Header `User-Agent` in `--header` is set by the destination (User-Agent, Content-Type, X-Signature, webhook-id, webhook-timestamp, webhook-signature) and may not be overridden.'],
    ['a header name with a space', ['--webhook', HOOK, '--header', 'X Team: a'], 'Expected header name `"X Team"` in `--header` to be an RFC 9110 token (ASCII letters, digits and !#$%&\'*+-.^_`|~; no spaces, colons, CR or LF).'],
    ['a header value with a non-ASCII character', ['--webhook', HOOK, '--header', 'X-Team: équipe'], 'Expected the value of `--header X-Team` to hold only visible ASCII characters, spaces and tabs; its character 1 is U+00E9 (é), not ASCII. (The value is not shown: it may be a credential.)'],
    ['a header given twice', ['--webhook', HOOK, '--header', 'X-Team: a', '--header', 'x-team: b'], '--header x-team is given twice; give each header once.'],
    ['an empty shared secret', ['--webhook', HOOK, '--shared-secret', ''], 'Expected `--shared-secret` to be a non-empty string, got `""`.'],
    ['an empty name', ['--name', ''], 'Expected `--name` to be a non-empty string, got `""`.'],
    ['an empty admin token', ['--admin-token', ''], 'Expected `--admin-token` to be a non-empty string, got `""`.'],
    ['a queue that is no queue server', ['--queue', 'mysql://db/x'], 'Expected `--queue` to be a redis://, rediss://, postgres:// or postgresql:// URL, got a mysql:// URL.'],
    ['a queue whose Redis path is no database number', ['--queue', 'redis://127.0.0.1:6379/analytics'], 'Expected `--queue` to be a redis://, rediss://, postgres:// or postgresql:// URL whose path is a database number (`/0`) or nothing, got `/analytics`.'],
    ['a queue URL without a host', ['--queue', 'postgres://'], 'Expected `--queue` to be a redis://, rediss://, postgres:// or postgresql:// URL naming its host, got a URL without one.'],
  ])('a bad flag value names the flag: %s', async (_, args, message) => {
    expect(await refusal(['collect', '--write-key', 'K', ...args])).toBe(message)
  })

  it('names --write-key and ANALYTICS_QUEUE_URL too', async () => {
    expect(await refusal(['collect', '--write-key', ''])).toBe('Expected `--write-key` to be a non-empty string, got `""`.')
    expect(await refusal(['collect', '--write-key', 'K'], { ANALYTICS_QUEUE_URL: 'mysql://db/x' }))
      .toBe('Expected `ANALYTICS_QUEUE_URL` to be a redis://, rediss://, postgres:// or postgresql:// URL, got a mysql:// URL.')
  })

  it('with --config and flags, names the flag for the flags\' source and the JSON path for the file\'s', async () => {
    const fileSource = { writeKey: 'FILE', name: 'default' }
    const bad = configFile('bad-url.json', { sources: [{ ...fileSource, webhooks: { urls: [{ url: 'ftp://x/' }] } }] })
    expect(await refusal(['collect', '--config', bad, '--write-key', 'K', '--name', 'cli', '--webhook', HOOK]))
      .toBe('Expected `sources[0].webhooks.urls[0].url` to use http or https, got `ftp:` in `"ftp://x/"`.')
    const good = configFile('good.json', { sources: [fileSource] })
    expect(await refusal(['collect', '--config', good, '--write-key', 'K', '--name', 'cli', '--webhook', 'ftp://y/']))
      .toBe('Expected `--webhook` to use http or https, got `ftp:` in `"ftp://y/"`.')
    expect(await refusal(['collect', '--config', good, '--write-key', 'K']))
      .toBe('`--name` (not given: `default`) repeats the name of `sources[0]`; each source needs its own.')
    expect(await refusal(['collect', '--config', good, '--write-key', 'FILE', '--name', 'cli']))
      .toBe('`--write-key` repeats the writeKey of `sources[0]`; each source needs its own.')
  })

  const FILE_KEYS = 'a --config file holds: sources, port, host, adminToken, trustProxy, allowPrivateWebhookUrls, drainTimeout, retention, deliveryConcurrency, maxPendingDeliveries, queue, debug, disableAfter.'
  it.each<[string, Record<string, unknown>, string]>([
    ['a mistyped key', { prot: 8700 }, `Unknown option \`prot\` (did you mean \`port\`?); ${FILE_KEYS}`],
    ['a snake_case key', { admin_token: 'T' }, `Unknown option \`admin_token\` (did you mean \`adminToken\`?); ${FILE_KEYS}`],
    ['an unknown key', { color: 'red' }, `Unknown option \`color\`; ${FILE_KEYS}`],
    ['a key that takes a function', { onError: 'log' }, `Option \`onError\` takes a function, which JSON cannot hold (pass it to createCollector in code); ${FILE_KEYS}`],
    ['unsafeShortAdminToken', { unsafeShortAdminToken: true }, `Option \`unsafeShortAdminToken\` is for tests only and is not read from a --config file: give \`adminToken\` 16 characters or more (\`openssl rand -hex 32\`); ${FILE_KEYS}`],
    ['a settings store', { settings: {} }, `Option \`settings\` takes a settings store (an object of functions), which JSON cannot hold (pass it to createCollector in code); ${FILE_KEYS}`],
    ['a port that is not a number', { port: '8700x' }, 'Expected `port` to be an integer from 0 to 65535, got `"8700x"`.'],
    ['a port out of range', { port: 70_000 }, 'Expected `port` to be an integer from 0 to 65535, got `70000`.'],
    ['a host that is not a string', { host: 127 }, 'Expected `host` to be a non-empty string, got `127`.'],
    ['sources that are not an array', { sources: { writeKey: 'K', name: 'web' } }, 'Expected `sources` to be an array of sources, got an object.'],
  ])('--config with %s', async (name, extra, message) => {
    const path = configFile(`${name.replace(/\W/g, '-')}.json`, { sources: [{ writeKey: 'K', name: 'web' }], ...extra })
    expect(await refusal(['collect', '--config', path])).toBe(message)
  })

  it.each<[string, Record<string, unknown>, string]>([
    ['writeky', { writeky: 'K', name: 'web' }, 'Unknown option `sources[0].writeky` (did you mean `sources[0].writeKey`?); known: writeKey, name, webhooks, trackingPlan.'],
    ['trackingPlan.violation', { writeKey: 'K', name: 'web', trackingPlan: { events: {}, violation: 'allow' } }, 'Unknown option `sources[0].trackingPlan.violation` (did you mean `sources[0].trackingPlan.violations`?); known: events, unplanned, violations.'],
    ['urls[0].header', { writeKey: 'K', name: 'web', webhooks: { urls: [{ url: HOOK, header: {} }] } }, 'Unknown option `sources[0].webhooks.urls[0].header` (did you mean `sources[0].webhooks.urls[0].headers`?); known: url, headers.'],
  ])('--config with a mistyped nested key (%s) gets a guess too', async (name, source, message) => {
    const path = configFile(`nested-${name.replace(/\W/g, '-')}.json`, { sources: [source] })
    expect(await refusal(['collect', '--config', path])).toBe(message)
  })

  // The first value was dropped without a word (two --write-key: only the second key worked).
  it.each<[string, string, string]>([
    ['write-key', 'AAAAAAAAAAAA1111', 'BBBBBBBBBBBB2222'],
    ['shared-secret', 'SHARED_SECRET_1111', 'SHARED_SECRET_2222'],
    ['admin-token', 'ADMIN_TOKEN_1111', 'ADMIN_TOKEN_2222'],
    ['name', 'web', 'app'],
    ['port', '8701', '8702'],
    ['host', '127.0.0.1', '0.0.0.0'],
    ['queue', 'redis://127.0.0.1:1', 'redis://127.0.0.1:2'],
    ['drain-timeout', '1000', '2000'],
    ['progress-interval', '1000', '2000'],
  ])('--%s given twice exits 2 naming it, without its values', async (flag, first, second) => {
    const source = flag === 'write-key' ? [] : ['--write-key', 'K', '--webhook', HOOK]
    const more = flag === 'write-key' ? ' (one source per --write-key; more sources go in --config)' : ''
    const cli = run(['collect', ...source, `--${flag}`, first, `--${flag}=${second}`])
    expect(await cli.exit).toBe(2)
    expect(cli.stderr()).toBe(`isomorphic-analytics: --${flag} is given more than once; give it once${more}.\n${USAGE}`)
  })

  it('--config given twice, and an empty --host, exit 2 too', async () => {
    const path = configFile('twice.json', { sources: [{ writeKey: 'K', name: 'web' }] })
    expect(await refusal(['collect', '--config', path, '--config', path])).toBe('--config is given more than once; give it once.')
    expect(await refusal(['collect', '--write-key', 'K', '--host', ''])).toBe('--host expects an address (--host ADDR, e.g. 127.0.0.1 or 0.0.0.0), got "".')
  })

  it('shows a write key or shared secret too short to mask as "hidden", not a lone "…", and the admin token not at all', async () => {
    const cli = run(['collect', '--port', '0', '--write-key', 'KEY', '--webhook', HOOK, '--shared-secret', 's3cret', '--admin-token', 'T0KEN-0123456789abc'], { DEBUG: 'analytics:cli' })
    await cli.waitFor(/Press Ctrl\+C to stop/)
    expect(cli.stdout()).toContain(`source "default" (write key hidden) → ${HOOK} (signed)`)
    // Written before the banner, but on another pipe.
    await vi.waitFor(() => expect(cli.stderr()).toContain('analytics:cli admin token set (not shown)'))
    expect(cli.stderr()).toContain('analytics:cli source "default": write key hidden, 1 webhook URL, shared secret hidden')
    for (const secret of ['KEY', 's3cret', 'T0KEN-0123456789abc']) expect(cli.stdout() + cli.stderr()).not.toContain(secret)
  })
})

describe('closest', () => {
  const flags = ['write-key', 'name', 'webhook', 'header', 'shared-secret', 'port', 'host', 'admin-token', 'drain-timeout', 'progress-interval']
  it.each<[string, string | undefined]>([
    ['WRITE_KEY', 'write-key'], ['prot', 'port'], ['hots', 'host'], ['headers', 'header'], ['sharedsecert', 'shared-secret'],
    ['secret', 'shared-secret'], ['timeout', 'drain-timeout'], ['verbose', undefined], ['pot', 'port'], ['', undefined], ['x', undefined],
    // Beginning alike, for four letters and most of the shorter name: the only such flag.
    ['hostname', 'host'], ['webhooks-url', 'webhook'], ['progress', 'progress-interval'], ['admin', 'admin-token'], ['drain', 'drain-timeout'], ['wri', undefined],
  ])('%j → %j', (typed, expected) => {
    expect(closest(typed, flags)).toBe(expected)
  })

  it('takes a caller\'s synonyms (another library\'s name for an option) first, when the name is known', () => {
    expect(closest('host', ['endpoint', 'host-name'], { host: 'endpoint' })).toBe('endpoint')
    expect(closest('host', ['host-name'], { host: 'endpoint' })).toBe('host-name')
    expect(closest('toString', ['endpoint'], {})).toBeUndefined()
  })
})
