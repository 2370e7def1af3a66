/**
 * A Next.js 16 app (App Router, TypeScript: ./nextjs-app/) as a user builds it, from the packed
 * package: `next build` with Turbopack (webpack too by hand: `BUNDLERS` below), type-checked, no
 * write key at build time, no warning but Next's own about the edge runtime; then `next start` against the real collector
 * on loopback, driven in Chromium: a Node route handler with `after(() => client.flush())`, an edge
 * route, the README's browser example in a client component, and a server action, all delivered.
 * Then SIGTERM to `next start` (which calls `process.exit(143)`) with a batch in flight and messages
 * queued: they are spilled, and the next `next start` sends them. Every message arrives exactly once.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { codeBlocks } from '../helpers/docs.js'
import { until } from '../helpers/until.js'
import { launchChromium, type Chromium } from '../runtimes/support/browser.js'
import { FIXTURE, nextBuild, nextStart, prepareNextProject, type Bundler, type NextProject, type NextServer } from './support/next-app.js'
import { startRecordingCollector, type RecordedMessage, type RecordingCollector } from './support/recording-collector.js'

const WRITE_KEY = 'next-write-key'
/** The README's browser example's key and endpoint, unchanged: Chromium's requests to it are sent on to the collector. */
const BROWSER_KEY = 'YOUR_WRITE_KEY'
const README_ENDPOINT = 'https://collector.example.com'

let project: NextProject
let collector: RecordingCollector
let chromium: Chromium

beforeAll(async () => {
  project = await prepareNextProject()
  console.log(`nextjs: project ready in ${project.setupMs} ms (${project.installed ? 'installed' : 'from the cache'})`)
  collector = await startRecordingCollector([WRITE_KEY, BROWSER_KEY])
  chromium = await launchChromium()
  await chromium.context.route(`${README_ENDPOINT}/**`, async (route) => {
    const url = new URL(route.request().url())
    try {
      await route.fulfill({ response: await route.fetch({ url: `${collector.url}${url.pathname}${url.search}` }) })
    } catch {
      // The page went first: its request is gone, and the messages missing say so.
      await route.abort().catch(() => {})
    }
  })
}, 900_000)

afterAll(async () => {
  await chromium?.close()
  await collector?.close()
})

const ids = (messages: RecordedMessage[]) => messages.map((m) => m.messageId)
const arrived = (wanted: string[]) => () => wanted.every((id) => collector.messages.some((m) => m.messageId === id))
const missing = (wanted: string[]) => () => wanted.filter((id) => !collector.messages.some((m) => m.messageId === id)).join(', ')

/** Calls a route of the app (POST when given a body); the message ids it answers. */
async function call(server: NextServer, path: string, body?: unknown): Promise<string[]> {
  const init = body === undefined ? {} : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
  const response = await fetch(`${server.url}${path}`, init)
  expect(response.status, `${path}\n${server.output()}`).toBe(200)
  return ((await response.json()) as { messageIds: string[] }).messageIds
}

/** Loads the page, runs the server action from its button, then hides the page (which sends the browser's queue). */
async function drivePage(server: NextServer): Promise<{ actionId: string; anonymousId: string; errors: string[] }> {
  const page = await chromium.context.newPage()
  const errors: string[] = []
  page.on('pageerror', (error) => errors.push(error.message))
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  await page.goto(server.url)
  await page.getByRole('button', { name: 'Subscribe' }).click()
  const output = page.locator('output')
  await until(async () => (await output.textContent()) !== '', 'the server action to answer', 30_000)
  const actionId = (await output.textContent())!
  // Kept by option `identity` (the README's example gives it).
  const anonymousId = await page.evaluate(() => localStorage.getItem('isomorphic-analytics.anonymousId')!)
  // Headless tabs never hide: what hiding does is what sends the browser's queue.
  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true })
    document.dispatchEvent(new Event('visibilitychange'))
  })
  await until(() => collector.messages.filter((m) => m.anonymousId === anonymousId).length >= 3, 'the browser’s messages', 30_000)
  await page.close()
  return { actionId, anonymousId, errors }
}

/**
 * Turbopack, `next build`'s default in Next 16 (about a minute of CI on two cores); by hand,
 * `NEXT_BUNDLERS=webpack,turbopack` builds with webpack too (about twice as long).
 */
const BUNDLERS = (process.env.NEXT_BUNDLERS?.split(',') ?? ['turbopack']) as Bundler[]

describe.each<Bundler>(BUNDLERS)('a Next.js 16 app built with %s', (bundler) => {
  const spillDir = () => join(project.dir, '.analytics-spill')
  const running: NextServer[] = []
  const started = (server: NextServer) => (running.push(server), server)
  afterEach(async () => {
    collector.hold = false
    await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')))
  })
  const spillFiles = () => (existsSync(spillDir()) ? readdirSync(spillDir()) : [])

  it('`next build` type-checks and builds without a write key, with no warning but Next’s own', async () => {
    const result = await nextBuild(project.dir, bundler)
    console.log(`nextjs: next build (${bundler}) took ${result.ms} ms`)
    expect(result.code, result.stdout + result.stderr).toBe(0)
    const output = result.stdout + result.stderr
    expect(output).toMatch(/Finished TypeScript/)
    const warnings = output.split('\n').filter((line) => /⚠|warn/i.test(line))
    // Next's own: the edge runtime's deprecation, and (in CI) that .next/cache is not kept between builds.
    const nexts = /Edge Runtime is deprecated|Using edge runtime on a page|No build cache found/
    expect(warnings.filter((line) => !nexts.test(line))).toEqual([])
  }, 900_000)

  it('route handler, edge route, client component and server action deliver; SIGTERM loses nothing; each message arrives once', async () => {
    rmSync(spillDir(), { recursive: true, force: true })
    const before = collector.messages.length
    const env = { WRITE_KEY, ANALYTICS_ENDPOINT: collector.url }
    const first = started(await nextStart(project.dir, env))

    const signedUp = await call(first, '/api/signup', { email: 'ada@example.com' })
    const edge = await call(first, '/api/edge')
    const { actionId, anonymousId, errors } = await drivePage(first)
    expect(errors).toEqual([])
    await until(arrived([...signedUp, ...edge, actionId]), 'the route handler’s, edge route’s and server action’s messages', 30_000, { progress: missing([...signedUp, ...edge, actionId]) })

    // The README's example at module level of the client component, sent by the browser only (the
    // server's render sent nothing): a page() given nothing, filled from the document, and a
    // track, with the kept anonymousId; then the identify() of the button, with the userId.
    const browser = collector.messages.filter((m) => m.anonymousId === anonymousId)
    expect(browser.map((m) => [m.type, m.event ?? m.name, m.userId])).toEqual([['page', undefined, undefined], ['track', 'Signed Up', undefined], ['identify', undefined, 'ada@example.com']])
    expect(browser[0].properties).toMatchObject({ path: '/', url: `${first.url}/`, title: 'Next.js fixture' })
    expect(browser[1].context).toMatchObject({ page: { path: '/', url: `${first.url}/` } })
    expect(collector.messages.filter((m) => m.event === 'Signed Up' && m.properties?.plan === 'pro'), 'the README example’s track, once').toHaveLength(1)

    // A batch in flight (a full one, sent at once and held by the collector) and messages queued
    // when `next start` is stopped. (Not with after(): Next's SIGTERM waits for its callbacks.)
    collector.hold = true
    const inFlight = await call(first, '/api/queue', { count: 20 })
    await until(() => collector.held >= 1, 'the full batch to be held in flight', 30_000)
    const queued = await call(first, '/api/queue', { count: 3 })
    const stopped = await first.stop('SIGTERM')
    expect(stopped).toEqual({ code: 143, signal: null })
    expect(first.output()).not.toMatch(/analytics error/)
    const spilled = spillFiles().flatMap((name) => readFileSync(join(spillDir(), name), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as RecordedMessage).messageId))
    expect(spilled.sort()).toEqual([...inFlight, ...queued].sort())

    // The next `next start` sends them when it makes its client (here: its first request).
    collector.hold = false
    const second = started(await nextStart(project.dir, env))
    const later = await call(second, '/api/signup', { email: 'lin@example.com' })
    const wanted = [...signedUp, ...edge, actionId, ...inFlight, ...queued, ...later]
    await until(arrived(wanted), 'the spilled messages and the new one', 30_000, { progress: missing(wanted) })
    expect(spillFiles(), 'spill files left after the next start took them').toEqual([])
    await second.stop('SIGTERM')
    expect(second.output()).not.toMatch(/analytics error/)

    const received = ids(collector.messages.slice(before))
    expect(received.filter((id, n) => received.indexOf(id) !== n), 'messages that arrived twice').toEqual([])
    expect(received.sort()).toEqual([...wanted, ...ids(browser)].sort())
  }, 300_000)
})

it('the client component holds the README’s browser example unchanged', () => {
  const readme = codeBlocks(['README.md']).find((b) => b.lang === 'ts' && b.code.includes("new Client('YOUR_WRITE_KEY'"))!
  // Each of its lines, as it is (at module level, not indented into a function), in its order.
  const component = readFileSync(join(FIXTURE, 'app/tracker.tsx'), 'utf8').split('\n')
  let at = -1
  for (const line of readme.code.split('\n').filter(Boolean)) {
    at = component.indexOf(line, at + 1)
    expect(at, `app/tracker.tsx lacks, in order: ${line}`).toBeGreaterThan(-1)
  }
})
