/** GET /console: the console's page and assets, with and without an admin token. */
import { gunzipSync } from 'node:zlib'
import { afterEach, describe, expect, it } from 'vitest'
import { CONSOLE_CSP } from '../../../src/collector/console/page.js'
import { createCollector } from '../../../src/collector/index.js'
import { KEY } from '../helpers.js'
import { admin, closeCollectors, collectors, consoleCollector } from './support.js'

afterEach(closeCollectors)

describe('GET /console', () => {
  it('serves the page and its assets with a strict Content-Security-Policy, and no inline script', async () => {
    const { collector } = consoleCollector()
    const page = await collector.fetch(new Request('http://collector.test/console'))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
    expect(CONSOLE_CSP).toContain("script-src 'self'")
    expect(CONSOLE_CSP).not.toContain('unsafe')
    const html = await page.text()
    expect(html).toContain('<script src="/console/console.js" defer></script>')
    expect(html).not.toMatch(/<script>|<style|style=|https?:\/\//)
    const script = await collector.fetch(new Request('http://collector.test/console/console.js'))
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await script.text()).toContain('Admin token')
    const style = await collector.fetch(new Request('http://collector.test/console/console.css'))
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect((await collector.fetch(new Request('http://collector.test/console/other.js'))).status).toBe(404)
    expect((await collector.fetch(new Request('http://collector.test/console', { method: 'POST' }))).status).toBe(405)
  })

  it('serves its assets gzipped to a client that accepts gzip, and as text to one that does not', async () => {
    const { collector } = consoleCollector()
    const plain = await collector.fetch(new Request('http://collector.test/console/console.js'))
    expect(plain.headers.get('content-encoding')).toBeNull()
    const text = await plain.text()
    const zipped = await collector.fetch(new Request('http://collector.test/console/console.js', { headers: { 'accept-encoding': 'gzip, deflate, br' } }))
    expect(zipped.headers.get('content-encoding')).toBe('gzip')
    expect(zipped.headers.get('vary')).toBe('Accept-Encoding')
    expect(zipped.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
    const bytes = new Uint8Array(await zipped.arrayBuffer())
    expect(bytes.byteLength).toBeLessThan(text.length / 2)
    expect(gunzipSync(bytes).toString('utf8')).toBe(text)
    const style = await collector.fetch(new Request('http://collector.test/console/console.css', { headers: { 'accept-encoding': 'gzip' } }))
    expect(gunzipSync(new Uint8Array(await style.arrayBuffer())).toString('utf8')).toBe(await (await collector.fetch(new Request('http://collector.test/console/console.css'))).text())
  })

  it('without an admin token, says how to enable it; the admin endpoints do not exist', async () => {
    const collector = createCollector({ sources: [{ writeKey: KEY, name: 'web' }] })
    collectors.push(collector)
    const page = await collector.fetch(new Request('http://collector.test/console'))
    expect(page.status).toBe(200)
    expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP)
    const html = await page.text()
    expect(html).toContain('--admin-token')
    expect(html).toContain('adminToken')
    expect(html).not.toContain('console.js')
    const sources = await collector.fetch(admin('/v1/admin/sources'))
    expect(sources.status).toBe(404)
    expect(((await sources.json()) as { error: { message: string } }).error.message).toMatch(/enabled by an admin token/)
  })
})
