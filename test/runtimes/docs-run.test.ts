/**
 * Docs that run: every code block of the README and of docs/, from the packed tarball, importing
 * `isomorphic-analytics` by name as users do, against loopback servers (the project they run in:
 * support/docs-project.ts; examples/ runs in examples-run.test.ts).
 *
 * - `ts`/`js` blocks run in Node (TypeScript stripped by esbuild). A preloaded script sends every
 *   request for a non-loopback host (or the documented port 8700), whether made with `fetch` or
 *   with `node:http(s)` (the client's default transport on Node), to a loopback recorder instead
 *   (`https://host/path` → `http://127.0.0.1:PORT/host/path`), so `https://collector.example.com`
 *   needs no network and parallel runs never collide on 8700. A block
 *   that exports a fetch handler is then called with a request; one that starts a server is sent a
 *   signed webhook and stopped. A block that imports `vitest` runs under vitest.
 * - Browser blocks (`html`, or code using `document`) run in Chromium, with unpkg and the
 *   collector answered by the test.
 * - `json` blocks parse; the `text` block is what `npm start` prints, compared with a real run.
 * - `sh` blocks: the CLI command runs (on a free port instead of 8700, so parallel test runs do
 *   not collide, and with its `--webhook` URLs sent to the loopback recorder); `npm install …`,
 *   `npm start` and `npm test` are what this test (from the tarball), test/collector/pipeline.test.ts
 *   and CI run, and are checked against that list. Any other `sh` block (`curl …`) is a shell
 *   session against that collector: bash runs it with `127.0.0.1:8700` replaced by the running
 *   collector's address (`--admin-token` added when missing) and a value written as `NAME=...`
 *   filled in (`TOKEN`: the admin token); every request must be answered, none with a 5xx or a 401
 *   (a stream, `curl -N`, is read for 2 s).
 * - A `ts`/`tsx` block that opens with `// <path>` of a file of the Next.js app in
 *   test/frameworks/nextjs-app/ (docs/nextjs.md) is that file, byte for byte: the Next.js test
 *   builds and runs it there (test/frameworks/nextjs.test.ts), so it is not run here again.
 * - A block of a language not listed here fails the first test, naming it: teach this test to run
 *   it rather than leave it unrun.
 */
import { createHmac } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { transform, build } from 'esbuild'
import { describe, expect, it } from 'vitest'
import { type Block, codeBlocks, DOC_FILES, readDoc } from '../helpers/docs.js'
import { launchChromium } from './support/browser.js'
import { clean, ENV, postSignedTrack, untilOutput, useDocsProject } from './support/docs-project.js'
import { ROOT, run, type RunResult } from './support/runtimes.js'

const BLOCKS: Block[] = codeBlocks()
const label = (b: Block) => `${b.file}:${b.line} (${b.lang})`
/** A file name for a block's code in the scratch project: unique per file and line. */
const blockName = (b: Block) => `block-${b.file.replace(/\W+/g, '-')}-${b.line}`

const CODE = ['ts', 'js', 'typescript', 'javascript', 'mjs']
const SHELL = ['sh', 'bash', 'shell']
const KNOWN = [...CODE, ...SHELL, 'html', 'json', 'text', 'tsx']
const NEXT_APP = join(ROOT, 'test/frameworks/nextjs-app')
/** The Next.js app's file a block is (its first line `// app/…`), if it is one. */
const nextAppFile = (b: Block) => {
  const path = /^\/\/ ([\w./[\]-]+\.tsx?)\n/.exec(b.code)?.[1]
  return path && ['ts', 'tsx'].includes(b.lang) && existsSync(join(NEXT_APP, path)) ? path : undefined
}
const isCode = (b: Block) => CODE.includes(b.lang) && !nextAppFile(b)
/** A page's code: it reads the document, or gives option `identity` (which sends nothing where there is no page). */
const isBrowser = (b: Block) => b.lang === 'html' || (isCode(b) && /\bdocument\.|\bidentity: \{/.test(b.code))
const isVitest = (b: Block) => /from 'vitest'/.test(b.code)
const nodeBlocks = BLOCKS.filter((b) => isCode(b) && !isBrowser(b) && !isVitest(b))

/** A shell block's commands: continuation lines joined, comments and blank lines dropped. */
const commandsOf = (b: Block) =>
  b.code.replace(/\\\n\s*/g, '').split('\n')
    .map((line) => line.replace(/(^|\s+)#.*$/, '').trim())
    .filter(Boolean)
const NPM_COMMANDS = ['npm install && npm start', 'npm test', 'npm install isomorphic-analytics']
const isCli = (command: string) => command.startsWith('npx isomorphic-analytics ')
const shellBlocks = BLOCKS.filter((b) => SHELL.includes(b.lang))
const sessions = shellBlocks.filter((b) => commandsOf(b).some((c) => !c.startsWith('npm ') && !isCli(c)))

/**
 * Imports the block; calls an exported fetch handler or webhook handler the way a platform would
 * (a webhook signed both ways: X-Signature and the Standard Webhooks headers).
 */
const RUNNER = `import { createHmac } from 'node:crypto'
import { sign } from 'isomorphic-analytics/webhooks'
const mod = await import(process.argv[2])
if (typeof mod.default?.fetch === 'function') {
  const pending = []
  const response = await mod.default.fetch(new Request('http://127.0.0.1/'), { WRITE_KEY: process.env.WRITE_KEY }, { waitUntil: (p) => pending.push(p) })
  await Promise.all(pending)
  console.log('fetch handler answered ' + response.status)
}
if (typeof mod.handler === 'function') {
  const body = JSON.stringify({ version: 1, type: 'track', messageId: 'm-1', userId: 'user-1', event: 'Docs Ran', properties: {}, timestamp: new Date().toISOString(), context: {} })
  const id = 'msg_docs'
  const seconds = String(Math.floor(Date.now() / 1000))
  const key = Buffer.from(process.env.WEBHOOK_STANDARD_SECRET.slice(6), 'base64')
  const standard = 'v1,' + createHmac('sha256', key).update(id + '.' + seconds + '.' + body).digest('base64')
  const headers = { 'X-Signature': await sign(body, process.env.WEBHOOK_SECRET), 'webhook-id': id, 'webhook-timestamp': seconds, 'webhook-signature': standard }
  const response = await mod.handler(new Request('http://127.0.0.1/hook', { method: 'POST', body, headers }))
  console.log('webhook handler answered ' + response.status)
}
`

const project = useDocsProject('docs-run', { 'runner.mjs': RUNNER })
const { recorded, node, whileListening } = project

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/

/** The CLI's arguments for a README command: a free port, and webhooks sent to the loopback recorder. */
function cliArgs(command: string): string[] {
  const args = command.replace('npx isomorphic-analytics ', '').replace('--port 8700', '--port 0')
    .replace(/--webhook\s+https?:\/\/(\S+)/g, (_, rest: string) => `--webhook ${project.recorderUrl}/${rest}`)
  return [join(project.dir, 'node_modules/isomorphic-analytics/dist/cli.js'), ...args.split(/\s+/)]
}

describe('every code block of the README and docs/ runs as pasted (from the packed package)', () => {
  it('the docs have the blocks this test knows how to run, and no other kind', () => {
    const unknown = BLOCKS.filter((b) => !KNOWN.includes(b.lang) || (b.lang === 'tsx' && !nextAppFile(b))).map((b) => `${label(b)}: a \`${b.lang || '(no language)'}\` block`)
    expect(unknown, 'blocks this test does not know how to run').toEqual([])
    expect(nodeBlocks.length).toBeGreaterThanOrEqual(7)
  })

  it.each(nodeBlocks.map((b) => [label(b), b] as const))('%s', async (_label, block) => {
    const { code } = await transform(block.code, { loader: 'ts', format: 'esm' })
    const file = `${blockName(block)}.mjs`
    writeFileSync(join(project.dir, file), code)
    if (/\.listen\(/.test(block.code)) {
      const code = await whileListening([file], async (url, output) => {
        expect(await postSignedTrack(url)).toBe(200)
        await untilOutput(output, /received track from user-1/)
      })
      expect(code === 0 || code === null).toBe(true)
      return
    }
    const before = recorded.length
    const result = await node(['--import', './redirect.mjs', 'runner.mjs', `./${file}`])
    clean(result, label(block))
    if (/new Client\(/.test(block.code)) {
      const batches = recorded.slice(before).filter((r) => r.path.endsWith('/v1/batch'))
      expect(batches.length, `${label(block)} sent no batch`).toBeGreaterThan(0)
    }
    if (/^export default \{/m.test(block.code)) expect(result.stdout).toContain('fetch handler answered 200')
    if (/^export const handler/m.test(block.code)) expect(result.stdout).toContain('webhook handler answered 200')
    if (/new WebhookDestination\(/.test(block.code)) {
      expect(recorded.slice(before).map((r) => `${r.host}${r.path}`)).toContain('hooks.example.com/analytics')
    }
  })

  it('the quick example sends with the write key from WRITE_KEY', () => {
    const batches = recorded.filter((r) => r.host === 'api.segment.io' && r.path === '/v1/batch')
    expect(batches.map((r) => r.authorization)).toContain(`Basic ${btoa(`${ENV.WRITE_KEY}:`)}`)
    expect(batches.flatMap((r) => (JSON.parse(r.body) as { batch: Array<{ type: string }> }).batch.map((m) => m.type))).toEqual(
      expect.arrayContaining(['identify', 'track']),
    )
  })

  it.each(BLOCKS.filter(isVitest).map((b) => [label(b), b] as const))('%s passes under vitest', async (_label, block) => {
    writeFileSync(join(project.dir, `${blockName(block)}.test.ts`), block.code)
    writeFileSync(join(project.dir, 'vitest.config.mjs'), "export default { test: { include: ['*.test.ts'] } }\n")
    const result = await node([join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', `${blockName(block)}.test.ts`, '--root', project.dir, '--config', 'vitest.config.mjs'], { NO_COLOR: '1', FORCE_COLOR: '0' }, 60_000)
    expect(result.stdout + result.stderr).toMatch(/Tests\s+2 passed \(2\)/)
    expect(result.code, result.stdout + result.stderr).toBe(0)
  }, 90_000)

  it.each(BLOCKS.filter(nextAppFile).map((b) => [label(b), b] as const))('%s is its file of the Next.js app (built and run by test/frameworks/nextjs.test.ts)', (_label, block) => {
    const path = nextAppFile(block)!
    expect(block.code.slice(block.code.indexOf('\n') + 1), path).toBe(readFileSync(join(NEXT_APP, path), 'utf8'))
  })

  it.each(BLOCKS.filter((b) => b.lang === 'json').map((b) => [label(b), b] as const))('%s is valid JSON', (_label, block) => {
    expect(() => JSON.parse(block.code)).not.toThrow()
  })

  it('the sh blocks: the CLI command runs; the npm commands are the ones this test and CI run', async () => {
    const commands = shellBlocks.flatMap(commandsOf)
    for (const npm of commands.filter((c) => c.startsWith('npm '))) expect(NPM_COMMANDS, 'an npm command in the docs').toContain(npm)
    expect(commands).toEqual(expect.arrayContaining(NPM_COMMANDS))
    const cli = commands.filter(isCli)
    expect(cli.length).toBeGreaterThan(0)
    for (const command of cli) {
      const code = await whileListening(cliArgs(command), async (url) => {
        const response = await fetch(`${url}/v1/batch`, { method: 'POST', body: '{"batch":[]}', headers: { 'content-type': 'application/json' } })
        expect(response.status).toBe(401) // no write key: the collector is up and answering
      }, LISTENING)
      expect(code).toBe(0)
    }
  }, 60_000)

  it.each(sessions.map((b) => [label(b), b] as const))('%s runs in bash against the CLI collector', async (_label, block) => {
    const command = shellBlocks.flatMap(commandsOf).find(isCli)!
    const args = cliArgs(/--admin-token\s/.test(command) ? command : `${command} --admin-token ${ENV.ADMIN_TOKEN}`)
    const before = recorded.length
    let result: RunResult | undefined
    const code = await whileListening(args, async (url) => {
      const script = block.code
        .replace(/https?:\/\/(?:127\.0\.0\.1|localhost):8700/g, url)
        .replace(/\b([A-Z][A-Z0-9_]*)=\.\.\.(?=[;\s]|$)/gm, (_, name: string) => `${name}="$DOCS_${name}"`)
      writeFileSync(join(project.dir, 'codes.txt'), '')
      // A stream (`curl -N`) is read for 2 s, then left: its timeout is no error when it answered.
      const wrapper = `curl() {
  local max=10 rc=0; for a in "$@"; do [ "$a" = "-N" ] && max=2; done
  if [ $max = 2 ]; then command curl -sS --max-time 2 -o "$DOCS_DIR/body.txt" -w '%{http_code}\\n' "$@" >> "$DOCS_DIR/codes.txt" 2>/dev/null || rc=$?; [ $rc = 28 ] && rc=0
  else command curl -sS --max-time 10 -o "$DOCS_DIR/body.txt" -w '%{http_code}\\n' "$@" >> "$DOCS_DIR/codes.txt" || rc=$?; fi
  cat "$DOCS_DIR/body.txt"; echo; return $rc
}\n`
      result = await run('bash', ['-e', '-o', 'pipefail', '-c', wrapper + script], {
        cwd: project.dir,
        env: { DOCS_DIR: project.dir, DOCS_TOKEN: ENV.ADMIN_TOKEN, DOCS_ADMIN_TOKEN: ENV.ADMIN_TOKEN, DOCS_WRITE_KEY: ENV.WRITE_KEY },
      })
      if (/-u KEY:/.test(block.code) && /--webhook/.test(command)) {
        // A message sent with the README's write key is forwarded, signed with its secret.
        const deadline = Date.now() + 10_000
        while (!recorded.slice(before).some((r) => r.signature) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
      }
    }, LISTENING)
    expect(code).toBe(0)
    clean(result!, label(block))
    const codes = readFileSync(join(project.dir, 'codes.txt'), 'utf8').trim().split('\n').map(Number)
    expect(codes.length, `${label(block)} made no request`).toBeGreaterThan(0)
    for (const status of codes) {
      expect(status, `${label(block)}: a request got no answer (000), a 5xx or a 401\n${result!.stdout}`).toSatisfy((n: number) => n >= 200 && n < 500 && n !== 401)
    }
    if (/-u KEY:/.test(block.code) && /--webhook/.test(command)) {
      const hook = new URL(/--webhook\s+(\S+)/.exec(command)![1])
      const secret = /--shared-secret\s+(\S+)/.exec(command)?.[1]
      const forwarded = recorded.slice(before).filter((r) => r.host === hook.host && r.path === hook.pathname)
      expect(forwarded.length, `${label(block)}: nothing was forwarded to ${hook.href}`).toBeGreaterThan(0)
      if (secret) expect(forwarded[0].signature).toBe(createHmac('sha1', secret).update(forwarded[0].body).digest('hex'))
    }
  }, 60_000)

  it('the text block is what `npm start` prints (ports, timestamps and arrival order aside)', async () => {
    const result = await node(['examples/pipeline.mjs'])
    clean(result, 'examples/pipeline.mjs')
    const normalise = (text: string) =>
      text.trim().split('\n').map((line) => line.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT').replace(/timestamp=\S+/, 'timestamp=T')).sort()
    const shown = BLOCKS.find((b) => b.lang === 'text' && b.code.startsWith('isomorphic-analytics: the whole pipeline'))!
    expect(normalise(result.stdout)).toEqual(normalise(shown.code))
  })

  it.each(['analytics', 'analytics:*', 'analytics:client'])('the text block of DEBUG lines is what DEBUG=%s prints (ids, sizes, ports and times aside)', async (setting) => {
    writeFileSync(join(project.dir, 'debug-lines.mjs'), `import { Client } from 'isomorphic-analytics'
const client = new Client('k', { endpoint: 'http://127.0.0.1:8700' })
client.track({ userId: 'u', event: 'E' })
await client.flush()
`)
    const result = await node(['--import', './redirect.mjs', 'debug-lines.mjs'], { DEBUG: setting })
    const shown = BLOCKS.find((b) => b.lang === 'text' && b.code.startsWith('analytics:client '))!
    const normalise = (text: string) =>
      text.trim().split('\n').map((line) => line
        .replace(/[0-9a-f]{8}-[0-9a-f-]{27}|[0-9a-f]{8}-…/g, 'ID').replace(/\+\d+ms$/, '+Tms').replace(/\(\d+ (bytes|chars)\)/, '(N $1)')
        .replace(/127\.0\.0\.1:\d+/, '127.0.0.1:PORT'))
    expect(normalise(result.stderr)).toEqual(normalise(shown.code))
  })

  it('the browser blocks run in Chromium (bundled, and as a <script> from unpkg)', async () => {
    const browserBlocks = BLOCKS.filter(isBrowser)
    expect(browserBlocks.map((b) => b.lang)).toContain('html')
    const chromium = await launchChromium()
    const sent: string[] = []
    try {
      const { context } = chromium
      await context.route('https://unpkg.com/isomorphic-analytics/dist/isomorphic-analytics.global.js', (route) =>
        route.fulfill({ contentType: 'text/javascript', body: readFileSync(join(project.dir, 'node_modules/isomorphic-analytics/dist/isomorphic-analytics.global.js'), 'utf8') }))
      await context.route('https://collector.example.com/**', (route) => {
        sent.push(route.request().postData() ?? '')
        return route.fulfill({ status: 200, contentType: 'application/json', headers: { 'access-control-allow-origin': '*' }, body: '{"success":true}' })
      })
      for (const block of browserBlocks) {
        let html = block.code
        if (block.lang !== 'html') {
          const bundle = await build({ stdin: { contents: block.code, resolveDir: project.dir, loader: 'ts' }, bundle: true, platform: 'browser', format: 'iife', write: false, logLevel: 'silent' })
          html = `<title>Docs</title><script>${bundle.outputFiles[0].text}</script>`
        }
        await context.route('https://app.test/', (route) => route.fulfill({ contentType: 'text/html', body: `<!doctype html>${html}` }))
        const page = await context.newPage()
        const errors: string[] = []
        page.on('pageerror', (e) => errors.push(e.message))
        page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
        const before = sent.length
        await page.goto('https://app.test/')
        // Headless tabs never hide: the page-hide path is what sends the queue.
        await page.evaluate(() => {
          Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true })
          document.dispatchEvent(new Event('visibilitychange'))
        })
        const deadline = Date.now() + 10_000
        while (sent.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25))
        expect(errors, label(block)).toEqual([])
        expect(sent.length, `${label(block)} sent nothing`).toBeGreaterThan(before)
        if (block.code.includes('YOUR_WRITE_KEY')) expect(JSON.parse(sent[sent.length - 1])).toMatchObject({ writeKey: 'YOUR_WRITE_KEY' })
        await page.close()
        await context.unroute('https://app.test/')
      }
    } finally {
      await chromium.close()
    }
  }, 90_000)
})

describe('figures in the docs come from the scripts that measure them', () => {
  it('the sizes they quote (bundle size, console) are what scripts/size.mjs measures now (`npm run size -- --docs` rewrites them)', async () => {
    // @ts-expect-error: a plain .mjs script, without declarations
    const { docsFigures, withFigures } = (await import('../../scripts/size.mjs')) as {
      docsFigures(): Promise<unknown>
      withFigures(readme: string, figures: unknown): string
    }
    const figures = await docsFigures()
    // Each figure's sentence is still there for the script to find (a rewording must update it).
    expect(readDoc('docs/console.md')).toMatch(/no framework\), about\s+[\d.]+ KB\s+gzipped in all/)
    expect(readDoc('docs/performance.md')).toMatch(/^\| isomorphic-analytics [^|]+\| [^|]+\| [^|]+\|$/m)
    for (const file of DOC_FILES) expect(readDoc(file), file).toBe(withFigures(readDoc(file), figures))
  }, 30_000)
})
