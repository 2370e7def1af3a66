/**
 * Searching the live view in real Chromium: with 500 messages listed, a keystroke in the search
 * only hides and shows items (none is added, removed or rebuilt; the time it takes is printed),
 * and once typing pauses the collector is asked (`GET /v1/admin/messages` with the same filters,
 * exact match) for what it holds. Search by user id, anonymous id and outcome, combined; the
 * anonymous id is shown.
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
  it('filters 500 listed messages by hiding items, asks the collector with the same filters, by user, anonymous id and outcome', async () => {
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
    await eventually(() => items.count()).toBe(500)
    expect(await page.getByRole('listitem', { name: 'track Event 499' }).textContent()).toContain('user-49 · anonymous anon-499')

    // Keystrokes timed in the page (the input handler, and the style and layout it leads to): the
    // first is watched for what it changes; then clearing and typing again, six times each.
    const timed = await page.evaluate(() => {
      const label = [...document.querySelectorAll('label')].find((l) => l.textContent === 'User ID')!
      const input = document.getElementById(label.htmlFor) as HTMLInputElement
      const list = document.querySelector<HTMLElement>('ol.messages')!
      const key = (value: string) => {
        void list.offsetHeight
        const started = performance.now()
        input.value = value
        input.dispatchEvent(new Event('input', { bubbles: true }))
        const handler = performance.now() - started
        void list.offsetHeight
        return { handler, total: performance.now() - started }
      }
      const describe = (r: MutationRecord) => (r.type === 'attributes' ? `attribute ${r.attributeName}` : `${r.addedNodes.length} added, ${r.removedNodes.length} removed`)
      const observer = new MutationObserver(() => {})
      observer.observe(list, { subtree: true, childList: true, attributes: true, characterData: true })
      const before = list.children.length
      const first = key('user-7')
      const changes = observer.takeRecords().map(describe)
      observer.disconnect()
      const narrowing: number[] = [first.total]
      const widening: number[] = []
      const handlers: number[] = [first.handler]
      for (let i = 0; i < 6; i++) {
        const wide = key('')
        const narrow = key('user-7')
        widening.push(wide.total)
        narrowing.push(narrow.total)
        handlers.push(wide.handler, narrow.handler)
      }
      const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]
      return {
        kinds: [...new Set(changes)], changes: changes.length, before, after: list.children.length,
        narrowing: median(narrowing), widening: median(widening), handler: median(handlers),
      }
    })
    const ms = (n: number) => `${n.toFixed(1)} ms`
    console.log(`a keystroke with 500 messages listed (Chromium, medians of 7 and 6): 500 → 10 shown ${ms(timed.narrowing)}, 10 → 500 shown ${ms(timed.widening)}; the handler alone ${ms(timed.handler)}`)
    // No item added, removed or rebuilt: 490 items hidden, nothing else.
    expect(timed).toMatchObject({ kinds: ['attribute hidden'], changes: 490, before: 500, after: 500 })
    await eventually(() => items.count()).toBe(10)

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
