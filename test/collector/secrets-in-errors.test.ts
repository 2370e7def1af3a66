/**
 * Secrets in the collector's errors and log lines, at most their last four characters: a numeric
 * write key or admin token (shown whole, where a numeric shared secret was masked), the password
 * of a webhook URL that is not http(s), and the text of a body that is not JSON (V8's message
 * quotes it: `Unexpected token 'W', ..."writeKey":WRITEKEY_S"...`), in the 400 and its DEBUG line.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createCollector, isConfigError } from '../../src/collector/index.js'
import { createFakeCollector } from '../../src/testing/index.js'

const WRITE_KEY = 'WRITEKEY_SECRET_abcd1234'

function configError(make: () => unknown): { option: string; message: string } {
  try {
    make()
  } catch (error) {
    expect(isConfigError(error)).toBe(true)
    return error as { option: string; message: string }
  }
  throw new Error('no ConfigError')
}

describe('secrets in ConfigErrors', () => {
  it('a numeric write key or admin token shows its last four digits only, as a numeric shared secret does', () => {
    expect(configError(() => createCollector({ sources: [{ writeKey: 1234567890123 as never, name: 'a' }] }))).toEqual(expect.objectContaining({
      option: 'sources[0].writeKey',
      message: 'Expected `sources[0].writeKey` to be a non-empty string, got a number (`…0123`; not shown in full: it may be a credential).',
    }))
    expect(configError(() => createCollector({ sources: [{ writeKey: 'k', name: 'a' }], adminToken: 12345678901234n as never })).message)
      .toBe('Expected `adminToken` to be a non-empty string, got a bigint (`…1234`; not shown in full: it may be a credential).')
    expect(configError(() => createFakeCollector({ writeKey: 98765432109876 as never })).message)
      .toBe('Expected `writeKey` to be a non-empty string, got a number (`…9876`; not shown in full: it may be a credential).')
  })

  it('the password of a webhook URL that is not http(s) is masked', () => {
    const url = 'ftp://user:PASSWORD_SECRET_1234@h.example.com/hook'
    expect(configError(() => createCollector({ sources: [{ writeKey: 'k', name: 'a', webhooks: { urls: [{ url }] } }] })).message)
      .toBe('Expected `sources[0].webhooks.urls[0].url` to use http or https, got `ftp:` in `"ftp://user:…1234@h.example.com/hook"`.')
  })
})

describe('a body that is not JSON', () => {
  afterEach(() => vi.restoreAllMocks())

  it('is answered 400 INVALID_JSON with the position, and neither the answer nor the DEBUG line quotes it', async () => {
    const lines: string[] = []
    vi.spyOn(console, 'error').mockImplementation((line: unknown) => void lines.push(String(line)))
    const collector = createCollector({ sources: [{ writeKey: WRITE_KEY, name: 'web' }], debug: true })
    const bodies: Array<[string, string]> = [
      ['{"batch":[{"type":"track"}],"writeKey":WRITEKEY_SECRET_abcd1234}', 'expected a value (an object, array, string, number, true, false or null) at position 39 (line 1, column 40)'],
      [`{'writeKey':'${WRITE_KEY}','batch':[]}`, 'expected a property name in double quotes or `}` at position 1 (line 1, column 2)'],
      [`writeKey=${WRITE_KEY}&batch=x`, 'expected a value (an object, array, string, number, true, false or null) at position 0 (line 1, column 1)'],
      [`{"writeKey":"${WRITE_KEY}","batch":[`, 'it ends at position 48 (line 1, column 49), where a value (an object, array, string, number, true, false or null) was expected'],
    ]
    for (const [body, where] of bodies) {
      const response = await collector.fetch(new Request('http://collector.test/v1/batch', { method: 'POST', headers: { 'content-type': 'text/plain' }, body }))
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ success: false, error: { code: 'INVALID_JSON', message: `Request body is not valid JSON: ${where}.`, field: 'body' } })
    }
    expect(lines.filter((line) => line.includes('INVALID_JSON'))).toHaveLength(bodies.length)
    expect(lines.join('\n')).not.toMatch(/WRITEKEY_S/)
    await collector.close()
  })
})
