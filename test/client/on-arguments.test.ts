/**
 * `on()` and `off()` check their arguments when called: a listener that is not a function would
 * throw in place of the failure it was told of, and an unknown event name would never fire.
 */
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import { ConfigError, isHttpError, type ClientEvents } from '../../src/index.js'
import { WebhookDestination } from '../../src/webhooks/index.js'
import { DIST, requireBuild } from '../runtimes/support/runtimes.js'
import { collector, createTestClient, HttpResponse, installServer, trackInput } from '../helpers/client.js'

installServer()

/** Runs `fn`, expects a ConfigError, and returns it. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('expected a ConfigError, nothing was thrown')
}

describe('a listener that is not a function', () => {
  it.each([['undefined', undefined, '`undefined`'], ['null', null, '`null`'], ['a string', 'onError', '`"onError"`'], ['an object', {}, 'an object']])(
    'on(\'error\', %s) throws a ConfigError naming it, and the real failure still reaches the listeners', async (_label, listener, shown) => {
      collector(() => HttpResponse.json({ message: 'write key refused' }, { status: 401 }))
      const client = createTestClient({ maxRetries: 0 })
      const error = configError(() => client.on('error', listener as never))
      expect(error.option).toBe('listener')
      expect(error.message).toBe(`Expected \`listener\` to be a function, got ${shown}.`)
      // Nothing was registered: the 401 is reported as it is, not as "listener is not a function".
      const received: Error[] = []
      const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
      client.on('error', (e) => received.push(e))
      client.track(trackInput())
      expect(await client.flush()).toEqual({ delivered: 0, failed: 1 })
      expect(received).toHaveLength(1)
      expect(isHttpError(received[0])).toBe(true)
      expect(received[0].message).toContain('write key refused')
      expect(consoleError).not.toHaveBeenCalled()
    })

  it('off() checks its listener too', () => {
    const client = createTestClient()
    expect(configError(() => client.off('flush', undefined as never)).message).toBe('Expected `listener` to be a function, got `undefined`.')
  })
})

describe('an unknown event name', () => {
  it("on('eror', fn) throws a ConfigError with the known names and the closest one", () => {
    const client = createTestClient()
    const error = configError(() => client.on('eror' as keyof ClientEvents, () => {}))
    expect(error.option).toBe('event')
    expect(error.message).toBe('Expected `event` to be one of flush, retry, error (did you mean `error`?), got `"eror"`.')
  })

  it('a name nothing is close to gets the known names only; off() checks the name too', () => {
    const client = createTestClient()
    expect(configError(() => client.on('delivered' as keyof ClientEvents, () => {})).message)
      .toBe('Expected `event` to be one of flush, retry, error, got `"delivered"`.')
    expect(configError(() => client.off('Flush' as keyof ClientEvents, () => {})).message)
      .toBe('Expected `event` to be one of flush, retry, error (did you mean `flush`?), got `"Flush"`.')
  })

  it('the known names still work, and each fires', async () => {
    vi.useFakeTimers()
    collector((_, i) => (i === 0 ? HttpResponse.json({}, { status: 503 }) : HttpResponse.json({})))
    const client = createTestClient()
    const fired: string[] = []
    for (const name of ['flush', 'retry', 'error'] as const) client.on(name, () => fired.push(name))
    client.track(trackInput())
    const result = client.flush()
    await vi.advanceTimersByTimeAsync(10_000)
    expect(await result).toEqual({ delivered: 1, failed: 0 })
    expect(fired).toEqual(['retry', 'flush'])
  })

  it('the browser build names the known ones without a guess (the guess is left out of it for size)', async () => {
    requireBuild('index.browser.js')
    const browser = (await import(pathToFileURL(join(DIST, 'index.browser.js')).href)) as typeof import('../../src/index.js')
    const client = new browser.Client('key', { debug: false, persist: false })
    try {
      client.on('eror' as keyof ClientEvents, () => {})
      expect.unreachable()
    } catch (error) {
      expect(browser.isConfigError(error)).toBe(true)
      expect((error as Error).message).toBe('Expected `event` to be one of flush, retry, error, got `"eror"`.')
    } finally {
      await client.close(0)
    }
  })

  it("WebhookDestination's on() checks its arguments the same way", () => {
    const destination = new WebhookDestination({ urls: [{ url: 'https://hooks.test/a' }], sharedSecret: 'secret-1234' })
    expect(configError(() => destination.on('delivred' as 'delivered', () => {})).message)
      .toBe('Expected `event` to be one of attempt, retry, delivered, failed, late (did you mean `delivered`?), got `"delivred"`.')
    expect(configError(() => destination.on('failed', undefined as never)).message).toBe('Expected `listener` to be a function, got `undefined`.')
  })
})
