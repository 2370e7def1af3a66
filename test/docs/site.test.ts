/**
 * The documentation site as a reader meets it: `npm run docs` (TypeDoc, then VitePress) builds it
 * into a scratch folder, a static server on loopback serves it, and Debian's Chromium opens it.
 * The home page renders, the local search finds `flushAt` and lands on its section, every internal
 * link and anchor of every built page resolves, and nothing is fetched from another host.
 *
 * The API reference is generated from the doc comments of the four entries' public exports
 * (typedoc.json): TypeDoc's own validation (`notDocumented`, for the kinds
 * `requiredToBeDocumented` lists) names every export without one, and a test here fails on any.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Chromium, launchChromium } from '../runtimes/support/browser.js'
import { expectCleanExit, ROOT, run, scratchDir } from '../runtimes/support/runtimes.js'

const TYPES: Record<string, string> = {
  '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.woff2': 'font/woff2',
}

let scratch: ReturnType<typeof scratchDir>
let site: string
let server: Server
let origin: string
let chromium: Chromium
let typedocOutput: string

/** The built file a site path is served from (`cleanUrls`: `/client` is `client.html`), if any. */
function fileFor(path: string): string | undefined {
  const clean = decodeURIComponent(path.split(/[?#]/)[0])
  const candidates = clean.endsWith('/') ? [`${clean}index.html`] : [clean, `${clean}.html`, `${clean}/index.html`]
  return candidates.map((c) => join(site, c)).find((file) => file.startsWith(site) && existsSync(file) && extname(file) !== '')
}

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? htmlFiles(join(dir, entry.name)) : entry.name.endsWith('.html') ? [join(dir, entry.name)] : [],
  )
}

beforeAll(async () => {
  scratch = scratchDir('docs-site')
  site = join(scratch.dir, 'site')
  const api = await run('npx', ['typedoc'], { cwd: ROOT, timeoutMs: 300_000 })
  expectCleanExit(api, 'typedoc')
  typedocOutput = (api.stdout + api.stderr).replace(/\x1b\[[0-9;]*m/g, '')
  const built = await run('npx', ['vitepress', 'build', 'docs', '--outDir', site], { cwd: ROOT, timeoutMs: 400_000 })
  expectCleanExit(built, 'vitepress build')
  server = createServer((req, res) => {
    const file = fileFor(req.url ?? '/')
    if (!file) return void res.writeHead(404, { 'content-type': 'text/html' }).end(readFileSync(join(site, '404.html')))
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  chromium = await launchChromium()
}, 900_000)

afterAll(async () => {
  await chromium?.close()
  await new Promise((resolve) => server?.close(resolve))
  scratch?.remove()
}, 60_000)

describe('the API reference', () => {
  it('every public export of every entry has a doc comment (TypeDoc validation)', () => {
    const undocumented = [...typedocOutput.matchAll(/^\[(?:warning|error)\] (.+?) \(\w+\), defined in .+ does not have any documentation$/gm)].map((m) => m[1])
    expect(undocumented, 'public exports without a doc comment').toEqual([])
    expect(typedocOutput, 'TypeDoc warned').not.toMatch(/^\[(warning|error)\]/m)
  })
})

describe('the docs site (npm run docs), in Chromium', () => {
  it('renders the home page, loading nothing from another host', async () => {
    const page = await chromium.context.newPage()
    const elsewhere: string[] = []
    page.on('request', (request) => { if (!request.url().startsWith(origin) && !request.url().startsWith('data:')) elsewhere.push(request.url()) })
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(error.message))
    await page.goto(`${origin}/`)
    await page.getByRole('heading', { level: 1 }).filter({ hasText: 'isomorphic-analytics' }).waitFor()
    await page.getByRole('link', { name: 'Client and options' }).first().waitFor()
    expect(await page.title()).toContain('isomorphic-analytics')
    expect(errors).toEqual([])
    expect(elsewhere).toEqual([])
    await page.close()
  })

  it('the search finds `flushAt` and lands on the section that documents it', async () => {
    const page = await chromium.context.newPage()
    await page.goto(`${origin}/`)
    await page.getByRole('button', { name: /search/i }).first().click()
    const input = page.getByPlaceholder(/search/i)
    await input.fill('flushAt')
    const first = page.locator('.VPLocalSearchBox .result').first()
    await first.waitFor()
    await input.press('Enter')
    await page.waitForURL((url) => url.hash.length > 1)
    const url = new URL(page.url())
    // The section the result names: from its heading to the next heading.
    const text = await page.evaluate((id) => {
      const heading = document.getElementById(id)
      if (!heading) return null
      let section = heading.textContent ?? ''
      for (let node = heading.nextElementSibling; node && !/^H[1-6]$/.test(node.tagName); node = node.nextElementSibling) section += node.textContent
      return section
    }, decodeURIComponent(url.hash.slice(1)))
    expect(text, `${url.pathname}${url.hash} has no such heading`).not.toBeNull()
    expect(text).toContain('flushAt')
    await page.close()
  })

  it('every internal link of every page names a page that exists, and an anchor on it', () => {
    const pages = htmlFiles(site)
    expect(pages.length).toBeGreaterThan(30)
    const broken: string[] = []
    const ids = new Map<string, Set<string>>()
    const idsOf = (file: string) => {
      if (!ids.has(file)) ids.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])))
      return ids.get(file)!
    }
    let links = 0
    for (const file of pages) {
      const path = `/${relative(site, file).replace(/(index)?\.html$/, '')}`
      for (const [, raw] of readFileSync(file, 'utf8').matchAll(/<a\s[^>]*href="([^"]*)"/g)) {
        const href = raw.replace(/&amp;/g, '&')
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue // another site: https:, mailto:
        links++
        const target = new URL(href, `http://site${path}`)
        const targetFile = fileFor(target.pathname)
        if (!targetFile) {
          broken.push(`${path}: ${href} (no such page)`)
          continue
        }
        const anchor = decodeURIComponent(target.hash.slice(1))
        if (anchor && !idsOf(targetFile).has(anchor)) broken.push(`${path}: ${href} (no #${anchor} on that page)`)
      }
    }
    expect(links).toBeGreaterThan(500)
    expect(broken).toEqual([])
  })
})
