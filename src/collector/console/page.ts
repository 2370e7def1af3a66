/**
 * `GET /console` and its two assets. The page is served with a strict Content-Security-Policy:
 * only this origin's script and stylesheet, no inline script or style, no framing, and fetches
 * only to this origin. The assets are built from src/console/ and embedded in the collector at
 * build time (scripts/console-assets.mjs; loaded on first request, ./assets.ts), so the console
 * works offline on every runtime.
 * Without an admin token the console answers a page saying how to enable it.
 */

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
}

const head = (title: string, withApp: boolean) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><link rel="stylesheet" href="/console/console.css">${withApp ? '<script src="/console/console.js" defer></script>' : ''}</head>`

const PAGE = `${head('Collector console', true)}
<body><header><h1>isomorphic-analytics collector console</h1></header>
<main id="console"><noscript>The console needs JavaScript.</noscript></main></body></html>`

const DISABLED_PAGE = `${head('Collector console (not enabled)', false)}
<body><header><h1>isomorphic-analytics collector console</h1></header>
<main><h2>The console is not enabled</h2>
<p>The console and the admin endpoints need an admin token. Start the collector with one:</p>
<pre>npx isomorphic-analytics collect --write-key KEY --admin-token "$(openssl rand -hex 24)"</pre>
<p>or pass <code>adminToken</code> to <code>createCollector({ sources, adminToken })</code>
(or set <code>"adminToken"</code> in the <code>--config</code> file), then reload this page and sign in with that token.</p>
</main></body></html>`

function answer(body: BodyInit, type: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { headers: { 'content-type': `${type}; charset=utf-8`, ...SECURITY_HEADERS, ...extra } })
}

const unpacked = new Map<string, Uint8Array<ArrayBuffer>>()
/** An embedded asset's gzipped bytes (decoded from base64 once). */
function gzipped(base64: string): Uint8Array<ArrayBuffer> {
  let bytes = unpacked.get(base64)
  if (!bytes) unpacked.set(base64, (bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))))
  return bytes
}

/** An embedded asset: gzipped as stored when the client accepts gzip (browsers all do), else decompressed. */
function asset(base64: string, type: string, acceptEncoding: string | null): Response {
  const bytes = gzipped(base64)
  if (/\bgzip\b/i.test(acceptEncoding ?? '')) return answer(bytes, type, { 'content-encoding': 'gzip', vary: 'Accept-Encoding' })
  return answer(new Response(bytes).body!.pipeThrough(new DecompressionStream('gzip')), type, { vary: 'Accept-Encoding' })
}

/**
 * The answer to a `GET` of `/console`, `/console/console.js` or `/console/console.css`; else
 * `undefined`. `acceptEncoding`: the request's `Accept-Encoding`.
 */
export async function consoleAsset(path: string, enabled: boolean, acceptEncoding: string | null = null): Promise<Response | undefined> {
  if (path === '/console') return answer(enabled ? PAGE : DISABLED_PAGE, 'text/html')
  const css = path === '/console/console.css'
  if (!css && !(path === '/console/console.js' && enabled)) return undefined
  const { default: assets } = await import('./assets.js')
  return css ? asset(assets.css, 'text/css', acceptEncoding) : asset(assets.js, 'text/javascript', acceptEncoding)
}
