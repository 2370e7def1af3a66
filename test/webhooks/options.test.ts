import { describe, expect, it } from 'vitest'
import { createCollector } from '../../src/collector/index.js'
import { ConfigError, WebhookDestination, createWebhookHandler, isConfigError, sign, type WebhookDestinationOptions } from '../../src/webhooks/index.js'
import { signSync } from '../../src/webhooks/signature.js'

const url = 'https://hooks.example.com/in'

function configError(options: unknown): ConfigError {
  try {
    new WebhookDestination(options as WebhookDestinationOptions)
  } catch (error) {
    expect(isConfigError(error)).toBe(true)
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(options)}`)
}

describe('WebhookDestination options', () => {
  it('accepts 1 to 5 http(s) URLs with valid static headers', () => {
    const urls = Array.from({ length: 5 }, (_, i) => ({ url: `http://127.0.0.1:${8000 + i}/hook?i=${i}`, headers: { Authorization: 'Bearer abc', 'X-Team': 'growth\tteam' } }))
    expect(new WebhookDestination({ urls }).urls).toEqual(urls.map((u) => u.url))
    expect(new WebhookDestination({ urls: [{ url }], sharedSecret: 's', timeout: 1, retryWindow: 0 }).urls).toEqual([url])
  })

  // They were ignored: `sharedsecret` delivered unsigned, `timout` kept 5 s.
  it('an unknown option, at the top, in `backoff` or in a URL entry, is a ConfigError with a guess', () => {
    const top = configError({ urls: [{ url }], sharedsecret: 's' })
    expect(top.option).toBe('sharedsecret')
    expect(top.message).toBe('Unknown option `sharedsecret` (did you mean `sharedSecret`?); known: urls, sharedSecret, standardSecrets, timeout, retryWindow, fetch, backoff, now, random.')
    expect(configError({ urls: [{ url }], timout: 100 }).message).toContain('(did you mean `timeout`?)')
    expect(configError({ urls: [{ url }], backoff: { base: 1 } })).toMatchObject({ option: 'backoff.base', message: expect.stringContaining('did you mean `backoff.baseMs`?') })
    expect(configError({ urls: [{ url }, { url: `${url}2`, header: { A: 'b' } }] })).toMatchObject({ option: 'urls[1].header', message: expect.stringContaining('did you mean `urls[1].headers`?') })
  })

  it('more than 5 URLs, or none, is a ConfigError naming `urls`', () => {
    const six = Array.from({ length: 6 }, () => ({ url }))
    const error = configError({ urls: six })
    expect(error.option).toBe('urls')
    expect(error.message).toMatch(/1 to 5 entries, got 6 URLs/)
    expect(configError({ urls: [] }).message).toMatch(/got 0 URLs/)
    expect(configError({}).option).toBe('urls')
    expect(configError({ urls: url }).option).toBe('urls')
  })

  it('a non-http(s) or unparsable URL, or one with credentials, is a ConfigError naming the entry', () => {
    for (const bad of ['ftp://example.com/hook', 'file:///etc/passwd', 'javascript:alert(1)', 'ws://example.com', '/relative/path', 'not a url', '']) {
      const error = configError({ urls: [{ url }, { url: bad }] })
      expect(error.option, bad).toBe('urls[1].url')
    }
    expect(configError({ urls: [{ url: 'ftp://example.com' }] }).message).toMatch(/http or https, got `ftp:`/)
    expect(configError({ urls: [{ url: 'https://user:pw@example.com/' }] }).message).toMatch(/credentials/)
    // A credential in the query of a refused URL is masked in the message.
    for (const bad of ['ftp://x.test/?token=s3cr3tvalue', 'x?token=s3cr3tvalue']) {
      expect(configError({ urls: [{ url: bad }] }).message).toMatch(/token=…alue/)
    }
    expect(configError({ urls: ['https://example.com'] }).option).toBe('urls[0]')
  })

  it('a URL given twice (compared as parsed) is a ConfigError naming both entries, not the URL', () => {
    const error = configError({ urls: [{ url: 'https://h.test/a?token=s3cr3t' }, { url }, { url: 'HTTPS://H.TEST/a?token=s3cr3t' }] })
    expect(error.option).toBe('urls[2].url')
    expect(error.message).toBe('`urls[2].url` repeats `urls[0].url`; each URL may be given once.')
  })

  it('a URL given twice with different fragments (never sent) is the same URL: a ConfigError', () => {
    for (const [first, second] of [['https://h.test/hook#a', 'https://h.test/hook#b'], ['https://h.test/hook', 'https://h.test/hook#'], ['https://h.test/hook?x=1', 'https://h.test/hook?x=1#part']]) {
      const error = configError({ urls: [{ url: first }, { url: second }] })
      expect(error.option, second).toBe('urls[1].url')
      expect(error.message).toBe('`urls[1].url` repeats `urls[0].url`; each URL may be given once.')
    }
    // The query is sent: it tells URLs apart.
    expect(() => new WebhookDestination({ urls: [{ url: 'https://h.test/hook?a' }, { url: 'https://h.test/hook?b' }] })).not.toThrow()
  })

  it('header names that are not RFC 9110 tokens are ConfigErrors', () => {
    for (const name of ['X Bad', 'X-Bad:', 'X-Bad\r\nInjected: 1', 'X-Bäd', '', 'X-Bad\n', '(comment)']) {
      const error = configError({ urls: [{ url, headers: { [name]: 'v' } }] })
      expect(error.option, JSON.stringify(name)).toBe('urls[0].headers')
      expect(error.message).toMatch(/token/)
    }
  })

  it('header values with CR, LF, other control or non-ASCII characters are ConfigErrors', () => {
    for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'caf\u00e9', 'emoji 😀', 'nul\u0000', 'del\u007f']) {
      const error = configError({ urls: [{ url, headers: { 'X-Ok': value } }] })
      expect(error.option, JSON.stringify(value)).toBe('urls[0].headers')
      expect(error.message).toMatch(/visible ASCII/)
    }
    expect(configError({ urls: [{ url, headers: { 'X-Num': 5 } }] }).message).toMatch(/to be a string, got a number \(`…`; not shown in full/)
  })

  it('a bad header value is located by character, never repeated (it may be a credential)', () => {
    // A placeholder with an ellipsis, pasted from docs: the message says which character is wrong.
    const pasted = configError({ urls: [{ url, headers: { Authorization: 'Bearer sk_live_a1b2…' } }] })
    expect(pasted.message).toBe(
      'Expected `urls[0].headers["Authorization"]` to hold only visible ASCII characters, spaces and tabs; its character 20 is U+2026 (…), not ASCII. (The value is not shown: it may be a credential.)',
    )
    const injected = configError({ urls: [{ url, headers: { 'X-Api-Key': 'secret-9\r\nX-Injected: 1' } }] })
    expect(injected.message).toContain('its character 9 is U+000D (CR), a control character.')
    for (const error of [pasted, injected]) expect(error.message).not.toMatch(/sk_live|secret-9/)
    expect(configError({ urls: [{ url, headers: 'X-A: b' }] }).option).toBe('urls[0].headers')
  })

  it('static headers may not set User-Agent, Content-Type or X-Signature (any case), nor transport headers', () => {
    for (const name of ['User-Agent', 'user-agent', 'CONTENT-TYPE', 'Content-Type', 'x-signature', 'X-Signature']) {
      expect(configError({ urls: [{ url, headers: { [name]: 'x' } }] }).message).toMatch(/may not be overridden/)
    }
    for (const name of ['Host', 'content-length', 'Transfer-Encoding', 'Connection']) {
      expect(configError({ urls: [{ url, headers: { [name]: 'x' } }] }).message).toMatch(/managed by the HTTP connection/)
    }
    expect(configError({ urls: [{ url, headers: { 'X-A': '1', 'x-a': '2' } }] }).message).toMatch(/appears twice/)
  })

  it('numbers, functions and the secret are validated with the option named', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ timeout: 0 }, 'timeout'],
      [{ timeout: 1.5 }, 'timeout'],
      [{ timeout: '5000' }, 'timeout'],
      [{ retryWindow: -1 }, 'retryWindow'],
      [{ retryWindow: Infinity }, 'retryWindow'],
      [{ sharedSecret: '' }, 'sharedSecret'],
      [{ sharedSecret: 42 }, 'sharedSecret'],
      [{ fetch: 'fetch' }, 'fetch'],
      [{ now: 1 }, 'now'],
      [{ random: 0.5 }, 'random'],
      [{ backoff: 100 }, 'backoff'],
      [{ backoff: { baseMs: 0 } }, 'backoff.baseMs'],
      [{ backoff: { baseMs: 1000, capMs: 10 } }, 'backoff.capMs'],
    ]
    for (const [extra, option] of cases) {
      const error = configError({ urls: [{ url }], ...extra })
      expect(error.option, JSON.stringify(extra)).toBe(option)
      expect(error.message).toContain(`\`${option}\``)
    }
    expect(configError({ urls: [{ url }], timeout: 0 }).message).toBe('Expected `timeout` to be an integer ≥ 1, got `0`.')
    expect(configError(null).option).toBe('options')
  })

  it('a secret or header value that is not a string is shown masked, as a string one would be (last four characters at most)', async () => {
    const secret = 987654321987
    const messages = [
      configError({ urls: [{ url }], sharedSecret: secret }).message,
      configError({ urls: [{ url }], sharedSecret: 9876543219876543210n }).message,
      configError({ urls: [{ url, headers: { 'X-Api-Key': 5550123456789 } }] }).message,
      (() => { try { createWebhookHandler({ secret, onEvent: () => {} } as never) } catch (e) { return (e as Error).message } })(),
      (() => { try { signSync('{}', secret as never) } catch (e) { return (e as Error).message } })(),
      await sign('{}', secret as never).then(() => '', (e: Error) => e.message),
      // The collector builds each source's destination: the CLI prints this message.
      (() => { try { createCollector({ sources: [{ writeKey: 'k', name: 'web', webhooks: { urls: [{ url }], sharedSecret: secret as never } }] }) } catch (e) { return (e as Error).message } })(),
    ]
    expect(messages[0]).toBe('Expected `sharedSecret` to be a non-empty string, got a number (`…1987`; not shown in full: it may be a credential).')
    expect(messages[2]).toMatch(/^Expected `urls\[0\]\.headers\["X-Api-Key"\]` to be a string, got a number \(`…6789`/)
    expect(messages[6]).toMatch(/sources\[0\]\.webhooks\.sharedSecret.*`…1987`/)
    for (const message of messages) {
      expect(message).toMatch(/`…\d{4}`/)
      for (const full of ['987654321987', '9876543219876543210', '5550123456789']) expect(message).not.toContain(full)
    }
    expect(configError({ urls: [{ url }], sharedSecret: 42 }).message).toContain('got a number (`…`;')
  })
})
