import { describe, expect, it } from 'vitest'
import { ConsoleRecorder } from '../../../src/collector/console/recorder.js'
import { shareConsole } from '../../../src/collector/console/shared.js'
import type { QueueBus } from '../../../src/collector/state/bus.js'

function sharedWithBus() {
  const published: Array<{ topic: string; data: any }> = []
  const bus = {
    publish: async (topic: string, data: unknown) => void published.push({ topic, data }),
    subscribe: () => () => {},
  } as unknown as QueueBus
  return { shared: shareConsole(new ConsoleRecorder(), bus, { now: () => 0 }), published }
}

describe('shareConsole: the accepted-message notice', () => {
  it('a small message is shared whole, with its body', () => {
    const { shared, published } = sharedWithBus()
    const message = { type: 'track', event: 'Ping', userId: 'u', messageId: 'm1' }
    shared.record('web', message, { body: '{"x":1}', traceId: 't1' })
    expect(published).toStrictEqual([{ topic: 'accepted', data: { s: 'web', m: message, b: '{"x":1}', t: 't1' } }])
  })

  it('a message past 6,000 UTF-8 bytes (multi-byte text counted as bytes) is shared as a summary with its exact size', () => {
    const { shared, published } = sharedWithBus()
    // 2,100 three-byte characters: 2,100 UTF-16 units, 6,300 bytes (+ the rest of the JSON).
    const message = { type: 'track', event: 'Big', userId: 'u', anonymousId: 'a', messageId: 'm2', properties: { text: '€'.repeat(2_100) } }
    const size = new TextEncoder().encode(JSON.stringify(message)).length
    shared.record('web', message, { outcome: 'not forwarded', reason: 'no destination' })
    expect(published[0].data.m).toStrictEqual({
      // The ids a search finds it by are kept.
      type: 'track', event: 'Big', name: undefined, userId: 'u', anonymousId: 'a', messageId: 'm2', receivedAt: undefined,
      note: `${size} bytes: shown in the console of the collector process that accepted it`,
    })
  })

  it('a message with a bigint (from the lossless parse) is sized with the lossless serialiser', async () => {
    const { loadExactJson } = await import('../../../src/message/exact-json.js')
    await loadExactJson()
    const { shared, published } = sharedWithBus()
    const message = { type: 'track', event: 'Id', userId: 'u', messageId: 'm3', properties: { id: 12345678901234567890n } }
    shared.record('web', message, { outcome: 'not forwarded', reason: 'no destination' })
    expect(published[0].data.m).toBe(message)
  })
})

describe('shareConsole: admin payloads (deletion requests, audience syncs)', () => {
  it('are shared with their origin and name; a deletion is followed even past the per-second budget', () => {
    const published: Array<{ topic: string; data: any }> = []
    const bus = { publish: async (topic: string, data: unknown) => void published.push({ topic, data }), subscribe: () => () => {} } as unknown as QueueBus
    const recorder = new ConsoleRecorder()
    const shared = shareConsole(recorder, bus, { perSecond: 1, now: () => 0 })
    expect(shared.traceId()).toBeDefined()
    expect(shared.traceId()).toBeUndefined()
    const traceId = shared.traceId(true)
    expect(traceId).toBeDefined()
    const payload = { type: 'identify', userId: 'ada', traits: { fans: true } }
    shared.record('web', payload, { body: '{}', traceId }, { origin: 'audience', name: 'Fans' })
    expect(published[0].data).toMatchObject({ g: 'audience', n: 'Fans', t: traceId })
    expect(recorder.get('1')).toMatchObject({ type: 'identify', name: 'Fans', origin: 'audience', userId: 'ada' })
  })
})
