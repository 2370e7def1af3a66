/**
 * Option `identity`, in Node with a page's `document` and `localStorage` stubbed (real Chromium,
 * page, reload, cookies and worker: test/runtimes/chromium-identity.test.ts): an anonymous id made
 * once and kept, `identify()` remembered, the caller's ids first, `reset()`, storage `'none'` and
 * `'memory'`, a storage that refuses, and a server rendering a page's code (no page: nothing sent).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ConfigError, ValidationError } from '../../src/index.js'
import { ANONYMOUS_ID_KEY, USER_ID_KEY } from '../../src/client/identity.js'
import { resolveOptions } from '../../src/client/options.js'
import { collector, createTestClient, installServer, type Recorder } from '../helpers/client.js'

installServer()

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** `localStorage` as a page has it: strings by key. */
class FakeStorage {
  readonly items = new Map<string, string>()
  getItem(key: string): string | null {
    return this.items.get(key) ?? null
  }
  setItem(key: string, value: string): void {
    this.items.set(key, String(value))
  }
  removeItem(key: string): void {
    this.items.delete(key)
  }
}

let sink: Recorder
let storage: FakeStorage

beforeEach(() => {
  sink = collector()
  storage = new FakeStorage()
})

afterEach(() => vi.unstubAllGlobals())

function stubPage(): void {
  vi.stubGlobal('document', { title: 'Pricing', referrer: '' })
  vi.stubGlobal('localStorage', storage)
}

const ids = (messages: Array<Record<string, unknown>>) => messages.map(({ userId, anonymousId }) => ({ userId, anonymousId }))

describe('identity', () => {
  it('makes an anonymous id once, keeps it in localStorage, and gives it to calls that name no user', async () => {
    stubPage()
    const client = createTestClient({ identity: {} })
    const first = client.track({ event: 'Viewed Pricing' })
    client.page()
    // Another client on the page (another write key, a reload): the same user.
    const other = createTestClient({ identity: { storage: 'localStorage' } })
    other.track({ event: 'Second Client' })
    await Promise.all([client.flush(), other.flush()])
    expect(first.anonymousId).toMatch(UUID)
    expect(storage.items.get(ANONYMOUS_ID_KEY)).toBe(first.anonymousId)
    expect(ids(sink.messages())).toEqual([
      { userId: undefined, anonymousId: first.anonymousId },
      { userId: undefined, anonymousId: first.anonymousId },
      { userId: undefined, anonymousId: first.anonymousId },
    ])
  })

  it('identify() remembers the user for later calls; the caller\'s own ids always win', async () => {
    stubPage()
    const client = createTestClient({ identity: {} })
    const { anonymousId } = client.track({ event: 'Before' })
    client.identify({ userId: 'ada', traits: { plan: 'pro' } })
    client.track({ event: 'After' })
    client.group({ groupId: 'acme' })
    client.track({ event: 'For Someone Else', userId: 'grace', anonymousId: 'their-device' })
    await client.flush()
    expect(storage.items.get(USER_ID_KEY)).toBe('ada')
    expect(ids(sink.messages())).toEqual([
      { userId: undefined, anonymousId },
      { userId: 'ada', anonymousId },
      { userId: 'ada', anonymousId },
      { userId: 'ada', anonymousId },
      { userId: 'grace', anonymousId: 'their-device' },
    ])
  })

  it('reset() forgets the user and the anonymous id: the next call gets a new one', async () => {
    stubPage()
    const client = createTestClient({ identity: {} })
    client.identify({ userId: 'ada' })
    const before = client.track({ event: 'Signed Out' })
    client.reset()
    expect(storage.items.size).toBe(0)
    const after = client.track({ event: 'Viewed Home' })
    expect(after.userId).toBeUndefined()
    expect(after.anonymousId).toMatch(UUID)
    expect(after.anonymousId).not.toBe(before.anonymousId)
    expect(storage.items.get(ANONYMOUS_ID_KEY)).toBe(after.anonymousId)
  })

  it('an alias names both of its ids: nothing is filled in', () => {
    stubPage()
    const client = createTestClient({ identity: {} })
    client.identify({ userId: 'ada' })
    expect(client.alias({ userId: 'ada', previousId: 'old' })).not.toHaveProperty('anonymousId', expect.any(String))
  })

  it('storage "none" makes and keeps no anonymous id: a call needs a user, remembered in memory only', async () => {
    stubPage()
    const client = createTestClient({ identity: { storage: 'none' } })
    expect(() => client.track({ event: 'Anonymous' })).toThrow("You must pass either an 'anonymousId' or 'userId'.")
    client.identify({ userId: 'ada' })
    expect(client.track({ event: 'Known' })).toMatchObject({ userId: 'ada', anonymousId: undefined })
    expect(storage.items.size).toBe(0)
  })

  it('storage "memory" keeps the ids for the client\'s life, in no storage', () => {
    stubPage()
    const client = createTestClient({ identity: { storage: 'memory' } })
    const { anonymousId } = client.track({ event: 'One' })
    expect(client.track({ event: 'Two' }).anonymousId).toBe(anonymousId)
    expect(createTestClient({ identity: { storage: 'memory' } }).track({ event: 'Other Client' }).anonymousId).not.toBe(anonymousId)
    expect(storage.items.size).toBe(0)
  })

  it('a storage that refuses (blocked, full) keeps the ids in memory instead; nothing is thrown', () => {
    stubPage()
    const refusing = { getItem: () => { throw new Error('SecurityError') }, setItem: () => { throw new Error('QuotaExceededError') }, removeItem: () => {} }
    vi.stubGlobal('localStorage', refusing)
    const client = createTestClient({ identity: {} })
    const { anonymousId } = client.track({ event: 'One' })
    expect(anonymousId).toMatch(UUID)
    expect(client.track({ event: 'Two' }).anonymousId).toBe(anonymousId)
  })

  it('a page without localStorage (or whose localStorage throws on access) keeps the ids in memory, and sends', async () => {
    vi.stubGlobal('document', { title: 'Sandboxed', referrer: '' })
    const client = createTestClient({ identity: {} })
    const { anonymousId } = client.track({ event: 'One' })
    client.track({ event: 'Two' })
    await client.flush()
    expect(ids(sink.messages())).toEqual([{ userId: undefined, anonymousId }, { userId: undefined, anonymousId }])
    expect(anonymousId).toMatch(UUID)
  })

  it('is off on servers: a call with no ids throws, as the Go library\'s does', () => {
    expect(resolveOptions('k').identity).toBeUndefined()
    expect(resolveOptions('k', { identity: false }).identity).toBeUndefined()
    const client = createTestClient()
    expect(() => client.track({ event: 'Nobody' })).toThrow("You must pass either an 'anonymousId' or 'userId'.")
    expect(() => client.page()).toThrow(ValidationError)
  })

  it('is on by default in browser pages', () => {
    stubPage()
    vi.stubGlobal('window', {})
    const versions = Object.getOwnPropertyDescriptor(process, 'versions')!
    Object.defineProperty(process, 'versions', { ...versions, value: { ...process.versions, node: undefined } })
    try {
      expect(resolveOptions('k').identity).toBe('localStorage')
    } finally {
      Object.defineProperty(process, 'versions', versions)
    }
  })

  it('given where there is no page (a server rendering a client component): constructing and calling never throw, nothing is sent', async () => {
    vi.stubGlobal('localStorage', undefined)
    const client = createTestClient({ identity: {}, debug: true })
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line))
    const page = client.page()
    const track = client.track({ event: 'Rendered', userId: 'ada' })
    await client.flush()
    expect(page).toMatchObject({ type: 'page', anonymousId: expect.stringMatching(UUID) })
    expect(track).toMatchObject({ type: 'track', userId: 'ada' })
    expect(sink.requests).toHaveLength(0)
    expect(client.stats()).toMatchObject({ queued: 0, inFlight: 0, delivered: 0 })
    expect(lines.join('\n')).toMatch(/page not sent: option `identity` needs a page/)
    // Bad input is still named.
    expect(() => client.track({ event: 42 } as never)).toThrow(ValidationError)
  })

  it('refuses what is not false or { storage } of a known kind, by name', () => {
    const refused = (value: unknown) => {
      try {
        resolveOptions('k', { identity: value as never })
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError)
        return (error as Error).message
      }
      throw new Error('expected a ConfigError')
    }
    expect(refused(true)).toBe("Expected `identity` to be an object like `{ storage: 'localStorage' }`, or false, got `true`.")
    expect(refused({ storage: 'indexedDB' })).toBe("Expected `identity.storage` to be one of 'localStorage', 'cookie', 'memory', 'none', got `\"indexedDB\"`.")
    expect(refused({ store: 'cookie' })).toMatch(/^Unknown option `identity\.store`/)
  })
})
