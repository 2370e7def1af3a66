import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { Client, ConfigError, DEFAULTS, isConfigError } from '../../src/index.js'
import { resolveOptions } from '../../src/client/options.js'
import { DIST, requireBuild } from '../runtimes/support/runtimes.js'
import { collector, createTestClient, ENDPOINT, http, HttpResponse, installServer, server, trackInput } from '../helpers/client.js'

installServer()

/** The client as browser bundlers get it (dist/index.browser.js, its `#platform` the browser's). */
async function browserBuild(): Promise<typeof import('../../src/index.js')> {
  requireBuild('index.browser.js')
  return (await import(pathToFileURL(join(DIST, 'index.browser.js')).href)) as typeof import('../../src/index.js')
}

/** The message of the error `new Client(...)` of `client` (a build of it) throws. */
function constructorError(client: typeof Client, options: object): string {
  try {
    new client('key', { debug: false, persist: false, ...options })
  } catch (error) {
    return (error as Error).message
  }
  throw new Error('expected an error, nothing was thrown')
}

/** Runs `fn`, expects a ConfigError, and returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    expect(isConfigError(error)).toBe(true)
    return error as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('defaults', () => {
  it('resolves every option to the documented default', () => {
    vi.stubEnv('DEBUG', undefined)
    const resolved = resolveOptions('key')
    expect(resolved).toEqual({
      writeKey: 'key',
      endpoint: 'https://api.segment.io',
      batchUrl: 'https://api.segment.io/v1/batch',
      flushAt: 20,
      flushAfter: 5000,
      maxRetries: 10,
      timeout: 10_000,
      maxQueueSize: 10_000,
      context: undefined,
      integrations: undefined,
      transport: expect.any(Function),
      gzip: false,
      debug: false,
      maxConcurrentRequests: 8,
      minRetryDelay: 100,
      maxRetryDelay: 30_000,
      plainText: false,
      persist: false,
      browserContext: undefined,
      spillDir: undefined,
    })
    expect(Object.isFrozen(resolved)).toBe(true)
  })

  it('exports the one defaults object, matching the API table', () => {
    expect(DEFAULTS).toMatchObject({
      endpoint: 'https://api.segment.io',
      flushAt: 20,
      flushAfter: 5000,
      maxRetries: 10,
      timeout: 10_000,
      maxQueueSize: 10_000,
      gzip: false,
    })
    expect(Object.isFrozen(DEFAULTS)).toBe(true)
  })

  it('sends to https://api.segment.io/v1/batch by default', async () => {
    const bodies: unknown[] = []
    server.use(
      http.post('https://api.segment.io/v1/batch', async ({ request }) => {
        bodies.push(await request.json())
        return HttpResponse.json({ success: true })
      }),
    )
    const client = new Client('key', { debug: false })
    client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    await client.close()
    expect(bodies).toHaveLength(1)
  })

  it('flushes at 20 queued messages by default', async () => {
    const wire = collector()
    const client = createTestClient()
    for (let i = 0; i < 19; i++) client.track(trackInput(i))
    await new Promise((r) => setTimeout(r, 20))
    expect(wire.requests).toHaveLength(0)
    expect(client.stats().queued).toBe(19)
    client.track(trackInput(19))
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 20 })
    await vi.waitFor(() => expect(wire.requests).toHaveLength(1))
    expect(wire.requests[0].body.batch).toHaveLength(20)
  })

  it('uses the global fetch looked up at call time, and a given fetch instead when passed', async () => {
    const wire = collector()
    const client = createTestClient()
    client.track(trackInput())
    await client.flush()
    expect(wire.requests).toHaveLength(1)

    const fetch = vi.fn(async () => new Response('{}', { status: 200 }))
    const own = createTestClient({ fetch })
    own.track(trackInput())
    expect(await own.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(fetch).toHaveBeenCalledTimes(1)
    expect(fetch.mock.calls[0]).toEqual([`${ENDPOINT}/v1/batch`, expect.objectContaining({ method: 'POST' })])
    expect(wire.requests).toHaveLength(1)
  })
})

describe('fetch fallback', () => {
  it('uses cross-fetch where the runtime has no global fetch', async () => {
    const wire = collector()
    vi.stubGlobal('fetch', undefined)
    const client = createTestClient()
    const sent = client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(wire.messages()).toEqual([sent])
  })
})

describe('writeKey', () => {
  it.each([[''], ['   '], [undefined], [42], [null]])('rejects %j', (key) => {
    const error = configError(() => new Client(key as string))
    expect(error.option).toBe('writeKey')
    expect(error.message).toContain('writeKey')
  })

  // The write key is a secret: one given as a number was echoed whole (`got \`12345678\``).
  it.each([
    ['a number', 12345678, 'a number'],
    ['a bigint', 123456789012345678n, 'a bigint'],
    ['an array', ['sk_live_4f9a2c'], 'an array'],
    ['a Date', new Date(1234567890123), 'a Date'],
  ])('a write key given as %s is named by its kind, never shown', (_label, key, kind) => {
    const error = configError(() => new Client(key as never))
    expect(error.message).toBe(`Expected \`writeKey\` to be a non-empty string, got ${kind}.`)
    expect(error.message).not.toMatch(/1234|5678|4f9a/)
  })

  it.each([[undefined], [null], ['']])('a missing one (%j) says how to make the client where the key is unset, as while a framework builds', (key) => {
    const error = configError(() => new Client(key as never))
    expect(error.message).toMatch(/^Expected `writeKey` to be a non-empty string, got [^.]+\. Is its environment variable unset here\?/)
    expect(error.message).toContain('make the client on first use, not as the module loads: `let client; const analytics = () => (client ??= new Client(process.env.WRITE_KEY))`.')
  })

  it('the browser build leaves the hint out (for size: a page runs with the key its build gave it)', async () => {
    const { Client: BrowserClient } = await browserBuild()
    let message = ''
    try {
      new BrowserClient(undefined as never)
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe('Expected `writeKey` to be a non-empty string, got `undefined`.')
  })

  it('a blank one is shown as it is (it holds nothing)', () => {
    expect(configError(() => new Client('   ')).message).toBe('Expected `writeKey` to be a non-empty string, got `"   "`.')
  })

  it('options that are not an object are named by their kind: a write key passed in their place is not shown', () => {
    const error = configError(() => new Client('key', 'sk_live_4f9a2c' as never))
    expect(error.message).toBe('Expected `options` to be an object, got a string.')
  })
})

describe('invalid option values throw ConfigError naming the option and the value', () => {
  const integers: Array<[string, number]> = [
    ['flushAt', 1],
    ['size', 1],
    ['flushAfter', 1],
    ['maxRetries', 0],
    ['timeout', 1],
    ['maxQueueSize', 1],
    ['maxConcurrentRequests', 1],
    ['minRetryDelay', 0],
    ['maxRetryDelay', 0],
  ]
  const cases: Array<[string, unknown, string]> = []
  for (const [name, min] of integers) {
    cases.push([name, min - 1, String(min - 1)])
    cases.push([name, 1.5, '1.5'])
    cases.push([name, '5', '"5"'])
    cases.push([name, Number.NaN, 'NaN'])
    cases.push([name, Number.POSITIVE_INFINITY, 'Infinity'])
    cases.push([name, null, 'null'])
  }
  for (const name of ['gzip', 'debug', 'plainText', 'persist']) {
    cases.push([name, 'yes', '"yes"'])
    cases.push([name, 1, '1'])
  }
  for (const name of ['context', 'integrations']) {
    cases.push([name, 'x', '"x"'])
    cases.push([name, [], 'array'])
    cases.push([name, null, 'null'])
  }
  cases.push(['fetch', 'fetch', '"fetch"'])
  cases.push(['fetch', null, 'null'])
  cases.push(['endpoint', 'not a url', '"not a url"'])
  cases.push(['endpoint', 'ftp://collector.test', 'one for ftp://collector.test'])
  cases.push(['endpoint', '', '""'])
  cases.push(['endpoint', 42, '42'])
  cases.push(['endpoint', 'https://collector.test/?region=eu', 'a query'])
  cases.push(['endpoint', 'https://collector.test/#eu', 'or fragment'])

  it.each(cases)('%s = %j', (name, value, shown) => {
    const error = configError(() => new Client('key', { [name]: value }))
    expect(error.option).toBe(name)
    expect(error.code).toBe('CONFIG')
    expect(error.message).toContain(`\`${name}\``)
    expect(error.message).toContain(shown)
  })

  it('refuses a default context or integrations that no message could carry, naming where', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ context: { ids: new Map() } }, 'context.ids', /it is a Map/],
      [{ integrations: { Webhooks: { set: new Set() } } }, 'integrations.Webhooks.set', /it is a Set/],
      [{ context: { cyclic } }, 'context', /Cannot serialise `context`/],
    ]
    for (const [options, option, message] of cases) {
      const error = configError(() => new Client('key', options))
      expect([error.option, error.message]).toEqual([option, expect.stringMatching(message)])
    }
    expect(configError(() => new Client('key', { context: { pad: 'x'.repeat(32_000) } })).option).toBe('context')
    expect(() => new Client('key', { context: { id: 12345678901234567890n } as never })).not.toThrow()
  })

  it('accepts the smallest valid values', () => {
    const resolved = resolveOptions('key', {
      flushAt: 1, flushAfter: 1, maxRetries: 0, timeout: 1, maxQueueSize: 1, maxConcurrentRequests: 1,
      minRetryDelay: 0, maxRetryDelay: 0,
    })
    expect(resolved).toMatchObject({ flushAt: 1, flushAfter: 1, maxRetries: 0, timeout: 1, maxQueueSize: 1 })
  })

  it('rejects maxRetryDelay below minRetryDelay', () => {
    const error = configError(() => new Client('key', { minRetryDelay: 500, maxRetryDelay: 100 }))
    expect(error.option).toBe('maxRetryDelay')
    expect(error.message).toContain('100')
  })

  it('spill: { dir } resolves to an absolute directory; anything else is refused by name', () => {
    expect(resolveOptions('key', { spill: { dir: 'queue/spill' } }).spillDir).toBe(join(process.cwd(), 'queue/spill'))
    expect(resolveOptions('key', { spill: { dir: '/var/spill' } }).spillDir).toBe('/var/spill')
    expect(configError(() => new Client('key', { spill: '/var/spill' } as never)).message).toBe('Expected `spill` to be an object like `{ dir: string }`, got `"/var/spill"`.')
    expect(configError(() => new Client('key', { spill: {} } as never)).option).toBe('spill.dir')
    expect(configError(() => new Client('key', { spill: { dir: ' ' } })).message).toContain('Expected `spill.dir` to be a non-empty directory path')
    const unknown = configError(() => new Client('key', { spill: { dir: 'x', path: 'y' } } as never))
    expect(unknown.option).toBe('spill.path')
  })

  it('the browser build ignores spill (no file system)', async () => {
    const { Client: BrowserClient } = await browserBuild()
    expect(() => new BrowserClient('key', { debug: false, persist: false, spill: 'anything' } as never)).not.toThrow()
  })

  it('rejects options that are not an object', () => {
    expect(configError(() => new Client('key', 5 as never)).option).toBe('options')
    expect(configError(() => new Client('key', [] as never)).option).toBe('options')
  })

  const KNOWN = 'endpoint, flushAt, flushAfter, maxRetries, timeout, maxQueueSize, gzip, maxConcurrentRequests, minRetryDelay, maxRetryDelay, size, context, integrations, fetch, debug, plainText, schema, persist, spill, browserContext, identity'

  it('rejects an unknown option by name, with the known names', () => {
    const error = configError(() => new Client('key', { sampleRate: 0.5 } as never))
    expect(error.option).toBe('sampleRate')
    expect(error.message).toBe(`Unknown option \`sampleRate\`; known: ${KNOWN}.`)
  })

  // Before: "Unknown option `flushat`." alone, where createCollector, the testing kit and the CLI guess.
  it.each([['flushat', 'flushAt'], ['max_retries', 'maxRetries'], ['endpiont', 'endpoint'], ['plaintext', 'plainText'], ['persistt', 'persist'],
    // Other SDKs' names for them (Segment's and PostHog's Node SDKs, RudderStack's).
    ['host', 'endpoint'], ['dataPlaneUrl', 'endpoint'], ['flushInterval', 'flushAfter'], ['maxEventsInBatch', 'flushAt']])(
    'a typo (%s) gets a guess (%s) and the known names', (typed, meant) => {
      const error = configError(() => new Client('key', { [typed]: 1 } as never))
      expect(error.option).toBe(typed)
      expect(error.message).toBe(`Unknown option \`${typed}\` (did you mean \`${meant}\`?); known: ${KNOWN}.`)
    })

  it('the browser build names the unknown option alone (the guess and the list are left out of it for size)', async () => {
    const browser = await browserBuild()
    expect(constructorError(browser.Client, { flushat: 1 })).toBe('Unknown option `flushat`.')
  })
})

describe('size, the Go v2 alias of flushAt', () => {
  it('sets flushAt', async () => {
    expect(resolveOptions('key', { size: 3 }).flushAt).toBe(3)
    const wire = collector()
    const client = createTestClient({ size: 3, flushAfter: 60_000 })
    for (let i = 0; i < 3; i++) client.track(trackInput(i))
    await vi.waitFor(() => expect(wire.requests).toHaveLength(1))
    expect(wire.requests[0].body.batch).toHaveLength(3)
  })

  it('may be given with flushAt when both agree', () => {
    expect(resolveOptions('key', { size: 4, flushAt: 4 }).flushAt).toBe(4)
  })

  it('conflicting with flushAt is a ConfigError naming both values', () => {
    const error = configError(() => new Client('key', { size: 3, flushAt: 4 }))
    expect(error.option).toBe('size')
    expect(error.message).toContain('flushAt')
    expect(error.message).toContain('3')
    expect(error.message).toContain('4')
  })
})

describe('endpoint', () => {
  it.each([
    ['https://collector.test', 'https://collector.test/v1/batch'],
    ['https://collector.test/', 'https://collector.test/v1/batch'],
    ['https://collector.test///', 'https://collector.test/v1/batch'],
    ['https://collector.test/base/', 'https://collector.test/base/v1/batch'],
    ['http://127.0.0.1:8700', 'http://127.0.0.1:8700/v1/batch'],
  ])('%s → POST %s', (endpoint, url) => {
    expect(resolveOptions('key', { endpoint }).batchUrl).toBe(url)
  })

  it.each([
    ['https://collector.test/v1/batch', 'https://collector.test'],
    ['http://127.0.0.1:8700/v1/batch/', 'http://127.0.0.1:8700'],
    ['https://collector.test/base/v1/batch', 'https://collector.test/base'],
  ])('refuses %s, which already ends in /v1/batch, saying what to pass', (endpoint, base) => {
    expect(() => resolveOptions('key', { endpoint })).toThrow(
      new ConfigError('endpoint', `Expected \`endpoint\` to be the base URL (\`/v1/batch\` is added): pass \`'${base}'\`, not \`'${endpoint}'\`.`),
    )
  })

  // Accepted before: fetch refused every batch, the Node transport dropped the credentials, and the
  // password was printed in full by DEBUG lines, errors and console.error.
  it.each([
    ['https://user:PASSWORD_1234@collector.test', 'https://collector.test'],
    ['https://:PASSWORD_1234@collector.test:8443/base', 'https://collector.test:8443'],
    ['https://collector.test/?writeKey=KEY_SECRET_1234', 'https://collector.test'],
    ['https://collector.test/#KEY_SECRET_1234', 'https://collector.test'],
    ['https://collector.test/?', 'https://collector.test'],
  ])('refuses %s (credentials, a query or a fragment), naming only its origin', (endpoint, host) => {
    const error = configError(() => resolveOptions('key', { endpoint }))
    expect(error.option).toBe('endpoint')
    expect(error.message).toBe(`Expected \`endpoint\` to be an http(s) URL without credentials, a query or fragment, got one for ${host}.`)
  })

  // Before: `new URL()` threw and the error quoted the string as it was, the password with it
  // (`got "https://user:s3cretpass@collector.exampl…"`).
  it.each([
    ['an invalid port', 'https://user:s3cretpass@collector.example.com:99999', '`"…collector.example.com:99999"`'],
    ['a space in the host', 'https://user:s3cretpass@collector example.com', '`"…collector example.com"`'],
    ['no `:` after the scheme', 'http//user:s3cretpass@collector.example.com', '`"…collector.example.com"`'],
    ['an `@` in the password', 'https://user:s3cret@pass@collector.example.com:99999', '`"…collector.example.com:99999"`'],
    ['a query', 'https://collector.example.com:99999/?writeKey=s3cretpass', '`"https://collector.example.com:99999/…"`'],
    ['a fragment', 'https://collector.example.com:99999/#s3cretpass', '`"https://collector.example.com:99999/…"`'],
    ['a `?` in the password', 'https://user:s3cret?pass@collector.example.com', '`"…"`'],
    ['an `@` in a query', 'https://collector.example.com:99999/?to=a@b.test&token=s3cretpass', '`"…"`'],
  ])('an endpoint that does not parse, with %s, is shown without its credentials', (_label, endpoint, shown) => {
    const error = configError(() => new Client('key', { endpoint }))
    expect(error.option).toBe('endpoint')
    expect(error.message).toBe(`Expected \`endpoint\` to be an http(s) URL without credentials, a query or fragment, got ${shown}.`)
    expect(error.message).not.toMatch(/s3cret|pass|user/)
  })

  // Before: `got one for null.` (a scheme that is not special has the origin "null").
  it.each([
    ['localhost:8700', 'a `localhost:` URL (did you mean `\'http://localhost:8700\'`?)'],
    ['localhost:8700/', 'a `localhost:` URL (did you mean `\'http://localhost:8700\'`?)'],
    ['localhost:8700/v1/batch', 'a `localhost:` URL (did you mean `\'http://localhost:8700\'`?)'],
    ['collector.example.com:8443/analytics', 'a `collector.example.com:` URL (did you mean `\'http://collector.example.com:8443/analytics\'`?)'],
    ['127.0.0.1:8700', '`"127.0.0.1:8700"` (did you mean `\'http://127.0.0.1:8700\'`?)'],
    ['mailto:ops@collector.example.com', 'a `mailto:` URL'],
    ['file:///var/run/collector.sock', 'a `file:` URL'],
    ['localhost:8700/?writeKey=s3cretpass', 'a `localhost:` URL'],
  ])('refuses %s, naming its scheme, and guesses the URL meant by a host and port', (endpoint, got) => {
    const error = configError(() => new Client('key', { endpoint }))
    expect(error.option).toBe('endpoint')
    expect(error.message).toBe(`Expected \`endpoint\` to be an http(s) URL without credentials, a query or fragment, got ${got}.`)
    expect(error.message).not.toMatch(/null|ops@|s3cret/)
  })

  it('the browser build names the scheme without the guess (the guess is left out of it for size)', async () => {
    const browser = await browserBuild()
    expect(constructorError(browser.Client, { endpoint: 'localhost:8700' }))
      .toBe('Expected `endpoint` to be an http(s) URL without credentials, a query or fragment, got a `localhost:` URL.')
    expect(constructorError(browser.Client, { endpoint: 'https://user:s3cretpass@collector.example.com:99999' }))
      .toBe('Expected `endpoint` to be an http(s) URL without credentials, a query or fragment, got `"…collector.example.com:99999"`.')
  })

  it('tolerates a trailing slash on the wire', async () => {
    const wire = collector()
    const client = createTestClient({ endpoint: `${ENDPOINT}/` })
    client.track(trackInput())
    expect(await client.flush()).toEqual({ delivered: 1, failed: 0 })
    expect(wire.requests).toHaveLength(1)
  })
})

describe('context and integrations', () => {
  it('keeps non-empty defaults and drops empty ones', () => {
    const resolved = resolveOptions('key', { context: { app: { name: 'A' } }, integrations: { All: false } })
    expect(resolved.context).toEqual({ app: { name: 'A' } })
    expect(resolved.integrations).toEqual({ All: false })
    expect(resolveOptions('key', { context: {}, integrations: {} })).toMatchObject({ context: undefined, integrations: undefined })
  })
})
