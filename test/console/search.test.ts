/**
 * Searching the live view in real Chromium: with 500 messages listed, the newest 50 are shown
 * and "Show 50 more messages" shows the next ones (focus on the first of them); a keystroke in the
 * search only hides and shows items (none is added, removed or rebuilt; the time it takes until
 * the next frame is printed) and shows the first 50 matches again. Once typing pauses the
 * collector is asked (`GET /v1/admin/messages` with the same filters, exact match) for what it
 * holds. Search by user id, anonymous id and outcome, combined; the anonymous id is shown.
 */
import { describe, expect, it } from 'vitest'
import { consoleUnderTest, eventually } from './support.js'

const TOKEN = 'search-admin-token-0123456789'
const under = consoleUnderTest({
  sources: [{ writeKey: 'web-key', name: 'web', webhooks: { urls: [{ url: 'https://receiver.test/hook' }] } }],
  adminToken: TOKEN,
  // "Bad" events are refused (400: failed at once); the others are delivered.
  fetch: async (_url, init) => new Response('', { status: String(init?.body).includes('"event":"Bad"') ? 400 : 200 }),
})

async function send(batch: object[]): Promise<void> {
  const response = await fetch(`${under.server.url}/v1/batch`, {
    method: 'POST',
    headers: { authorization: `Basic ${btoa('web-key:')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ batch }),
  })
  expect(response.status).toBe(200)
}

describe('searching the live view', () => {
  it('shows 50 of 500 listed messages at a time, filters them by hiding items, asks the collector with the same filters, by user, anonymous id and outcome', async () => {
    await send(Array.from({ length: 500 }, (_, i) => ({
      type: 'track', event: i === 57 ? 'Bad' : `Event ${i}`, userId: `user-${i % 50}`, anonymousId: `anon-${i}`, messageId: `search-${i}`,
    })))
    await eventually(() => under.collector.stats().pending).toBe(0)
    const page = await under.signedIn()
    const asked: string[] = []
    page.on('request', (request) => {
      const url = new URL(request.url())
      if (url.pathname === '/v1/admin/messages') asked.push(url.search)
    })
    const items = page.getByRole('list', { name: 'Messages' }).getByRole('listitem')
    const more = page.locator('.more')
    await eventually(() => items.count()).toBe(50)
    expect(await more.textContent()).toBe('Showing the newest 50 of 500. Show 50 more messages')
    expect(await page.getByRole('listitem', { name: 'track Event 499' }).textContent()).toContain('user-49 · anonymous anon-499')
    // Each "Show more" shows the next 50, and focus moves to the first of them.
    await page.getByRole('button', { name: 'Show 50 more messages' }).click()
    await eventually(() => items.count()).toBe(100)
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Details of track Event 449')
    for (let shown = 150; shown <= 500; shown += 50) {
      await page.getByRole('button', { name: 'Show 50 more messages' }).click()
      await eventually(() => items.count()).toBe(shown)
    }
    expect(await more.isVisible()).toBe(false)
    // Every failure is reachable: Bad (the 57th sent) is near the end of the 500.
    expect(await items.last().getAttribute('aria-label')).toBe('track Event 0')
    await page.getByRole('button', { name: 'Retry delivery of track Bad' }).waitFor()

    // Keystrokes timed in the page, from the input handler until the next frame (after its style,
    // layout and paint; the style and layout alone are timed too). The first, with all 500 shown,
    // is watched for what it changes; then clearing (the first 50 shown again) and typing again,
    // six times each.
    const timed = await page.evaluate(async () => {
      const label = [...document.querySelectorAll('label')].find((l) => l.textContent === 'User ID')!
      const input = document.getElementById(label.htmlFor) as HTMLInputElement
      const list = document.querySelector<HTMLElement>('ol.messages')!
      const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)))
      const key = async (value: string) => {
        await frame()
        const started = performance.now()
        input.value = value
        input.dispatchEvent(new Event('input', { bubbles: true }))
        const handler = performance.now() - started
        void list.offsetHeight
        const layout = performance.now() - started
        await frame()
        return { handler, layout, total: performance.now() - started, shown: list.querySelectorAll(':scope > li:not([hidden])').length }
      }
      const describe = (r: MutationRecord) => (r.type === 'attributes' ? `attribute ${r.attributeName}` : `${r.addedNodes.length} added, ${r.removedNodes.length} removed`)
      const changes: string[] = []
      const observer = new MutationObserver((records) => changes.push(...records.map(describe)))
      observer.observe(list, { subtree: true, childList: true, attributes: true, characterData: true })
      const before = list.children.length
      const first = await key('user-7')
      changes.push(...observer.takeRecords().map(describe))
      observer.disconnect()
      const narrowing: Array<Awaited<ReturnType<typeof key>>> = []
      const widening: typeof narrowing = []
      for (let i = 0; i < 6; i++) {
        widening.push(await key(''))
        narrowing.push(await key('user-7'))
      }
      const median = (keys: typeof narrowing, of: 'handler' | 'layout' | 'total') => keys.map((k) => k[of]).sort((a, b) => a - b)[keys.length >> 1]
      return {
        kinds: [...new Set(changes)], changes: changes.length, before, after: list.children.length, first: first.total,
        shown: [...new Set([first, ...widening, ...narrowing].map((k) => k.shown))],
        narrowing: median(narrowing, 'total'), widening: median(widening, 'total'),
        narrowingLayout: median(narrowing, 'layout'), wideningLayout: median(widening, 'layout'), handler: median([...narrowing, ...widening], 'handler'),
      }
    })
    const ms = (n: number) => `${n.toFixed(1)} ms`
    console.log(`a keystroke with 500 messages listed, until the next frame (Chromium, medians of 6): 50 shown → 10 ${ms(timed.narrowing)}, 10 → 50 shown ${ms(timed.widening)}; their style and layout alone ${ms(timed.narrowingLayout)} and ${ms(timed.wideningLayout)}, the handler ${ms(timed.handler)}; the first, all 500 shown → 10, ${ms(timed.first)}`)
    // No item added, removed or rebuilt: 490 items hidden, nothing else; then 10 and 50 shown in turn.
    expect(timed).toMatchObject({ kinds: ['attribute hidden'], changes: 490, before: 500, after: 500, shown: [10, 50] })
    await eventually(() => items.count()).toBe(10)
    expect(await more.isVisible()).toBe(false)

    // Once typing pauses, the collector is asked with the same filters, exactly.
    const status = page.getByRole('search', { name: 'Search messages' }).getByRole('status')
    await eventually(() => status.textContent()).toBe('The collector holds 10 messages matching exactly.')
    expect(asked).toEqual(['?userId=user-7&limit=500'])

    await page.getByLabel('Outcome').selectOption('failed')
    await eventually(() => items.evaluateAll((li) => li.map((i) => i.getAttribute('aria-label')))).toEqual(['track Bad'])
    await eventually(() => status.textContent()).toBe('The collector holds 1 message matching exactly.')
    expect(asked.at(-1)).toBe('?userId=user-7&outcome=failed&limit=500')

    await page.getByLabel('User ID', { exact: true }).fill('')
    await page.getByLabel('Outcome').selectOption('')
    await page.getByLabel('Anonymous ID').fill('anon-123')
    await eventually(() => items.evaluateAll((li) => li.map((i) => i.getAttribute('aria-label')))).toEqual(['track Event 123'])
    await eventually(() => asked.at(-1)).toBe('?anonymousId=anon-123&limit=500')
    await page.getByLabel('Anonymous ID').fill('no such id')
    await eventually(() => page.getByText('No message matches the search.').isVisible()).toBe(true)
    await eventually(() => status.textContent()).toBe('The collector holds 0 messages matching exactly.')
    expect(under.pageErrors).toEqual([])
  })
})
