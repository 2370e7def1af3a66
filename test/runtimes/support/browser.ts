/**
 * Chromium plumbing: a static page server on its own loopback port (so the sink is cross-origin),
 * the pages the tests load, and Debian's chromium launched by playwright-core with a fresh profile.
 *
 * The ESM page loads the real `dist/index.js` through an import map (it has no static import of
 * another package). The web worker imports a browser bundle of the package made by esbuild
 * (import maps do not apply inside workers), which is also how bundler users run it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { extname, join, normalize } from 'node:path'
import { build } from 'esbuild'
import { chromium, type BrowserContext } from 'playwright-core'
import { afterAll, beforeAll } from 'vitest'
import { DIST, requireBinary, requireBuild, ROOT } from './runtimes.js'
import { startSink, type Sink } from './sink.js'

const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1',
]

const IMPORT_MAP = {
  imports: {
    'isomorphic-analytics': '/dist/index.js',
  },
}

/**
 * Marks each batch request with whether the client asked for `keepalive` (as a query parameter:
 * a custom header would make the request non-simple and trigger a preflight).
 */
export const MARK_KEEPALIVE = `(() => {
  const original = globalThis.fetch
  globalThis.fetch = function (input, init) {
    if (typeof input === 'string' && input.includes('/v1/batch')) input += (input.includes('?') ? '&' : '?') + 'keepalive=' + (init && init.keepalive ? 1 : 0)
    return original.call(this, input, init)
  }
})()`

const PAGES: Record<string, string> = {
  '/esm.html': `<!doctype html><title>esm</title>
<script type="importmap">${JSON.stringify(IMPORT_MAP)}</script>
<script type="module">
  import * as IA from 'isomorphic-analytics'
  window.IA = IA
  document.title = 'ready'
</script>`,
  '/iife.html': `<!doctype html><title>iife</title>
<script src="/dist/isomorphic-analytics.global.js"></script>
<script>window.IA = globalThis.IsomorphicAnalytics; document.title = 'ready'</script>`,
  '/next.html': '<!doctype html><title>next</title><p>next page</p>',
  '/worker.html': '<!doctype html><title>ready</title>',
  '/worker.js': `import { Client } from '/bundle/index.js'
self.onmessage = async ({ data }) => {
  const client = new Client('worker-key', { endpoint: data.sink, flushAt: 100 })
  const ids = [1, 2, 3].map((n) => client.track({ userId: 'worker-user', event: 'worker-' + n }).messageId)
  const result = await client.flush()
  self.postMessage({ ids, result, isWorker: typeof WorkerGlobalScope !== 'undefined' && typeof document === 'undefined' })
}`,
}

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.html': 'text/html', '.map': 'application/json' }

export interface PageServer {
  url: string
  close(): Promise<void>
}

/** `extra`: more generated files to serve (path → text), e.g. a third-party SDK's bundle and page. */
export async function startPageServer(extra: Record<string, string> = {}): Promise<PageServer> {
  requireBuild('index.js', 'isomorphic-analytics.global.js')
  const bundle = await build({
    stdin: { contents: "export * from 'isomorphic-analytics'", resolveDir: ROOT, sourcefile: 'bundle.js' },
    bundle: true, format: 'esm', platform: 'browser', conditions: ['worker', 'browser'], write: false, logLevel: 'silent',
  })
  const generated: Record<string, string> = {
    '/bundle/index.js': bundle.outputFiles[0].text,
    ...PAGES,
    ...extra,
  }
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    let body: string | Buffer | undefined = generated[path]
    try {
      if (body === undefined && path.startsWith('/dist/') && !normalize(path).includes('..')) body = readFileSync(join(DIST, path.slice(6)))
    } catch {
      body = undefined
    }
    if (body === undefined) {
      res.writeHead(404).end('not found')
      return
    }
    res.writeHead(200, { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-store' }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

export interface Chromium {
  context: BrowserContext
  close(): Promise<void>
}

/** Debian's chromium (never a downloaded one) with a fresh temporary profile. */
export async function launchChromium(): Promise<Chromium> {
  const executablePath = requireBinary('chromium')
  const profile = mkdtempSync(join(tmpdir(), 'ia-chromium-'))
  const context = await chromium.launchPersistentContext(profile, { executablePath, args: CHROMIUM_ARGS, headless: true, timeout: 60_000 })
  return {
    context,
    async close() {
      await context.close().catch(() => {})
      rmSync(profile, { recursive: true, force: true })
    },
  }
}

/** What a Chromium test file shares: a sink, the page server, and Chromium. */
export interface ChromiumWorld {
  readonly sink: Sink
  readonly pages: PageServer
  readonly browser: Chromium
}

/**
 * Registers this file's beforeAll/afterAll: a sink, a page server (serving `extra` too) and
 * Chromium, started once for the file and stopped after it. The world is ready inside tests.
 */
export function useChromium(extra: Record<string, string> = {}): ChromiumWorld {
  const world = {} as { sink: Sink; pages: PageServer; browser: Chromium }
  beforeAll(async () => {
    world.sink = await startSink()
    world.pages = await startPageServer(extra)
    world.browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await world.browser?.close()
    await world.pages?.close()
    await world.sink?.close()
  })
  return world
}
