/**
 * Option `browserContext`, in Node with a page's globals stubbed (real Chromium, page and worker:
 * test/runtimes/chromium.test.ts): the page and the browser under each message's own `context`,
 * a `page()`'s properties filled in, the caller's values always first, parts turned off, and
 * what a worker (no document, no screen) gets.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ConfigError } from '../../src/index.js'
import { resolveOptions } from '../../src/client/options.js'
import { collector, createTestClient, installServer, type Recorder } from '../helpers/client.js'

installServer()

const PAGE = { path: '/pricing', referrer: 'https://search.example/?q=plans', search: '?plan=pro', title: 'Pricing', url: 'https://shop.example/pricing?plan=pro' }
const TIMEZONE = Intl.DateTimeFormat().resolvedOptions().timeZone

let sink: Recorder

function stubPage({ document = true, screen = true } = {}): void {
  vi.stubGlobal('location', { pathname: PAGE.path, search: PAGE.search, href: `${PAGE.url}#plans` })
  vi.stubGlobal('navigator', { userAgent: 'Mozilla/5.0 (Test) Chrome/140.0', language: 'en-GB' })
  if (document) vi.stubGlobal('document', { title: PAGE.title, referrer: PAGE.referrer })
  if (screen) {
    vi.stubGlobal('screen', { width: 1440, height: 900 })
    vi.stubGlobal('devicePixelRatio', 2)
  }
}

beforeEach(() => {
  sink = collector()
})

afterEach(() => vi.unstubAllGlobals())

async function sent(options: Parameters<typeof createTestClient>[0], call: (client: ReturnType<typeof createTestClient>) => void) {
  const client = createTestClient({ persist: false, ...options })
  call(client)
  await client.flush()
  return sink.messages()
}

describe('browserContext', () => {
  it('adds the page, user agent, locale, time zone and screen under the message\'s context, the library kept', async () => {
    stubPage()
    const [message] = await sent({ browserContext: true }, (c) => c.track({ userId: 'u', event: 'Viewed Plans' }))
    expect(message!.context).toEqual({
      page: PAGE,
      userAgent: 'Mozilla/5.0 (Test) Chrome/140.0',
      locale: 'en-GB',
      timezone: TIMEZONE,
      screen: { width: 1440, height: 900, density: 2 },
      library: { name: 'isomorphic-analytics', version: expect.any(String) },
    })
  })

  it('the caller\'s values win: the client\'s context over the browser\'s, the message\'s over both', async () => {
    stubPage()
    const [message] = await sent({ browserContext: true, context: { locale: 'fr-FR', app: { name: 'shop' } } }, (c) =>
      c.track({ userId: 'u', event: 'E', context: { page: { title: 'Custom' }, app: { version: '2' } } }))
    expect(message!.context).toMatchObject({ locale: 'fr-FR', app: { name: 'shop', version: '2' }, page: { ...PAGE, title: 'Custom' }, userAgent: 'Mozilla/5.0 (Test) Chrome/140.0' })
  })

  it('reads the page at each call (a page that navigates)', async () => {
    stubPage()
    const client = createTestClient({ persist: false, browserContext: true })
    client.track({ userId: 'u', event: 'First' })
    vi.stubGlobal('location', { pathname: '/checkout', search: '', href: 'https://shop.example/checkout' })
    vi.stubGlobal('document', { title: 'Checkout', referrer: PAGE.url })
    client.track({ userId: 'u', event: 'Second' })
    await client.flush()
    expect(sink.messages().map((m) => (m.context as unknown as { page: { path: string; title: string } }).page)).toMatchObject([{ path: '/pricing', title: 'Pricing' }, { path: '/checkout', title: 'Checkout', referrer: PAGE.url }])
  })

  it('page() fills its properties from the document where the caller left them out (Go v2 traits count as the caller\'s)', async () => {
    stubPage()
    const messages = await sent({ browserContext: true }, (c) => {
      c.page({ userId: 'u' })
      c.page({ userId: 'u', name: 'Pricing', properties: { title: 'Plans', tier: 'pro' } })
      c.page({ userId: 'u', traits: { path: '/from-traits' } })
    })
    expect(messages.map((m) => m.properties)).toEqual([
      PAGE,
      { ...PAGE, title: 'Plans', tier: 'pro' },
      { ...PAGE, path: '/from-traits' },
    ])
  })

  it('parts turned off are left out; page: false leaves page()\'s properties alone too', async () => {
    stubPage()
    const messages = await sent({ browserContext: { page: false, screen: false, userAgent: false } }, (c) => c.page({ userId: 'u', name: 'Home' }))
    expect(messages[0]!.context).toEqual({ locale: 'en-GB', timezone: TIMEZONE, library: expect.any(Object) })
    expect(messages[0]!.properties).toBeUndefined()
  })

  it('false adds nothing', async () => {
    stubPage()
    const [message] = await sent({ browserContext: false }, (c) => c.page({ userId: 'u' }))
    expect(message!.context).toEqual({ library: expect.any(Object) })
    expect(message!.properties).toBeUndefined()
  })

  it('a worker (a location, no document or screen) gets what applies to it: no page, no screen', async () => {
    stubPage({ document: false, screen: false })
    const [message] = await sent({ browserContext: true }, (c) => c.page({ userId: 'u' }))
    expect(message!.context).toEqual({ userAgent: 'Mozilla/5.0 (Test) Chrome/140.0', locale: 'en-GB', timezone: TIMEZONE, library: expect.any(Object) })
    expect(message!.properties).toBeUndefined()
  })

  it('is on by default in browser pages and workers, off on servers', () => {
    expect(resolveOptions('k').browserContext).toBeUndefined()
    stubPage()
    vi.stubGlobal('window', {})
    const versions = Object.getOwnPropertyDescriptor(process, 'versions')!
    Object.defineProperty(process, 'versions', { ...versions, value: { ...process.versions, node: undefined } })
    try {
      expect(resolveOptions('k').browserContext).toEqual({})
    } finally {
      Object.defineProperty(process, 'versions', versions)
    }
  })

  it('refuses what is not a boolean or an object of known parts, by name', () => {
    const refused = (value: unknown) => {
      try {
        resolveOptions('k', { browserContext: value as never })
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('expected a ConfigError')
    }
    expect(refused('yes')).toBe('Expected `browserContext` to be a boolean or an object of booleans, got `"yes"`.')
    expect(refused({ colour: true })).toBe('Unknown option `browserContext.colour`; known: page, userAgent, locale, timezone, screen.')
    expect(refused({ page: 'no' })).toBe('Expected `browserContext.page` to be a boolean, got `"no"`.')
  })
})
