/**
 * The cursor of `GET /v1/admin/messages?since=` and of the stream: a burst larger than one page
 * (200 records) is read in pages, none lost; a cursor from an earlier process (another `boot`) is
 * answered with everything this process has, even once its versions have passed that cursor.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { post, track } from '../helpers.js'
import { admin, closeCollectors, consoleCollector, json } from './support.js'

afterEach(closeCollectors)

interface Answer {
  boot: string
  version: number
  more?: true
  messages: Array<{ id: string; name?: string; type: string }>
}

/** `count` track messages named `${prefix} ${i}` to the "app" source (no destination: they never change again). */
const burst = (prefix: string, count: number, type = 'track') =>
  post({ batch: Array.from({ length: count }, (_, i) => ({ ...track({ event: `${prefix} ${i}`, messageId: `${prefix}-${i}` }), type, ...(type === 'identify' && { userId: `u${i}` }) })) }, { key: 'OTHER' })

describe('the messages cursor', () => {
  it('GET ?since= pages a burst larger than one answer: the cursor stops at the last record sent', async () => {
    const { collector } = consoleCollector()
    expect((await collector.fetch(burst('Identify', 150, 'identify'))).status).toBe(200)
    expect((await collector.fetch(burst('Track', 150))).status).toBe(200)
    const first: Answer = (await json(collector, admin('/v1/admin/messages?since=0'))).body
    expect(first.messages).toHaveLength(200)
    expect(first.more).toBe(true)
    const second: Answer = (await json(collector, admin(`/v1/admin/messages?since=${first.version}`))).body
    expect(second.messages).toHaveLength(100)
    expect(second.more).toBeUndefined()
    const ids = new Set([...first.messages, ...second.messages].map((m) => m.id))
    expect(ids.size).toBe(300)
    // Each page is listed newest first; the first page holds the oldest changes.
    expect(Number(first.messages[0].id)).toBeGreaterThan(Number(first.messages[199].id))
    expect(Math.max(...first.messages.map((m) => Number(m.id)))).toBeLessThan(Math.min(...second.messages.map((m) => Number(m.id))))
    // Filtered: all 150 identify messages, in one page.
    const identify: Answer = (await json(collector, admin('/v1/admin/messages?since=0&type=identify'))).body
    expect(identify.messages).toHaveLength(150)
    // Without `since`: the latest 200, as before (a snapshot; nothing to page).
    const latest: Answer = (await json(collector, admin('/v1/admin/messages'))).body
    expect(latest.messages.map((m) => m.name ?? m.type)).toEqual(Array.from({ length: 150 }, (_, i) => `Track ${149 - i}`).concat(Array(50).fill('identify')))
    expect(latest.more).toBeUndefined()
  })

  it('the stream sends a burst larger than one event in several events, none lost', async () => {
    const { collector } = consoleCollector()
    const response = await collector.fetch(admin('/v1/admin/messages/stream?since=0'))
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    const next = async (): Promise<Answer> => {
      while (!buffered.includes('\n\n')) {
        const { done, value } = await reader.read()
        if (done) throw new Error('the stream ended')
        buffered += value
      }
      const end = buffered.indexOf('\n\n')
      const event = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      return JSON.parse(/^data: (.*)$/m.exec(event)![1]) as Answer
    }
    expect((await next()).messages).toEqual([])
    expect((await collector.fetch(burst('Burst', 450))).status).toBe(200)
    const seen = new Set<string>()
    while (seen.size < 450) {
      const answer = await next()
      for (const m of answer.messages) seen.add(m.name!)
    }
    expect(seen).toEqual(new Set(Array.from({ length: 450 }, (_, i) => `Burst ${i}`)))
    await reader.cancel()
  })

  it('a cursor from an earlier process (another boot) gets everything this process has, with its boot', async () => {
    const before = consoleCollector().collector
    await before.fetch(burst('Before restart', 5))
    const old: Answer = (await json(before, admin('/v1/admin/messages?since=0'))).body
    expect(old.version).toBe(5)
    await closeCollectors()

    const { collector } = consoleCollector()
    await collector.fetch(burst('After restart', 10))
    const cursor = `since=${old.version}&boot=${old.boot}`
    const answer: Answer = (await json(collector, admin(`/v1/admin/messages?${cursor}`))).body
    expect(answer.messages.map((m) => m.name)).toEqual(Array.from({ length: 10 }, (_, i) => `After restart ${9 - i}`))
    expect(answer.boot).not.toBe(old.boot)
    // This process's own cursor is used as it is.
    const mine: Answer = (await json(collector, admin(`/v1/admin/messages?since=8&boot=${answer.boot}`))).body
    expect(mine.messages.map((m) => m.name)).toEqual(['After restart 9', 'After restart 8'])

    const stream = await collector.fetch(admin(`/v1/admin/messages/stream?${cursor}`))
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader()
    const first = JSON.parse(/^data: (.*)$/m.exec((await reader.read()).value!)![1]) as Answer
    expect(first.messages).toHaveLength(10)
    await collector.fetch(burst('Later', 1))
    const second = JSON.parse(/^data: (.*)$/m.exec((await reader.read()).value!)![1]) as Answer
    // Later events follow this process's cursor: only the new record, not everything again.
    expect(second.messages.map((m) => m.name)).toEqual(['Later 0'])
    await reader.cancel()
  })
})
