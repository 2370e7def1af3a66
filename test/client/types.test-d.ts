import { describe, expectTypeOf, it } from 'vitest'
import {
  Client, type AliasMessage, type ClientEvents, type ClientStats, type FlushResult, type GroupMessage, type IdentifyMessage,
  type PageMessage, type SentMessage, type TrackMessage,
} from '../../src/index.js'

const client = new Client('key')

describe('message types', () => {
  it('track needs event; its ids are optional (option identity fills them in, servers throw without)', () => {
    client.track({ event: 'Clicked', userId: 'u' })
    client.track({ event: 'Clicked', anonymousId: 'a', properties: { x: 1 }, timestamp: new Date(), messageId: 'm' })
    // @ts-expect-error a track without event must not compile
    client.track({ userId: 'u' })
    client.track({ event: 'Clicked' })
    // @ts-expect-error event must be a string
    client.track({ event: 42, userId: 'u' })
    expectTypeOf<{ userId: string }>().not.toExtend<TrackMessage>()
    expectTypeOf<{ event: string; userId: string }>().toExtend<TrackMessage>()
  })

  it('group needs groupId; alias needs userId and previousId', () => {
    client.group({ groupId: 'g', userId: 'u', traits: { plan: 'pro' } })
    // @ts-expect-error a group without groupId must not compile
    client.group({ userId: 'u' })
    client.alias({ userId: 'u', previousId: 'p' })
    // @ts-expect-error an alias without previousId must not compile
    client.alias({ userId: 'u' })
    expectTypeOf<{ userId: string }>().not.toExtend<AliasMessage>()
    expectTypeOf<{ groupId: string; anonymousId: string }>().toExtend<GroupMessage>()
  })

  it('identify, page and screen take optional ids; page() takes nothing at all', () => {
    client.identify({ userId: 'u', traits: { email: 'e' } })
    client.identify({ traits: {} })
    client.page({ anonymousId: 'a', name: 'Home', traits: { path: '/' } })
    client.page()
    client.screen({ userId: 'u', name: 'Settings' })
    client.reset()
    // @ts-expect-error an id is a string
    client.screen({ userId: 1, name: 'Settings' })
    expectTypeOf<{ name: string }>().toExtend<PageMessage>()
    expectTypeOf<{ userId: string }>().toExtend<IdentifyMessage>()
  })

  it('timestamp is a Date or a string', () => {
    client.track({ event: 'e', userId: 'u', timestamp: '2026-11-22T10:00:00.000Z' })
    // @ts-expect-error a number is not a timestamp
    client.track({ event: 'e', userId: 'u', timestamp: 1 })
  })
})

describe('results', () => {
  it('calls return the sent message, synchronously', () => {
    const sent = client.track({ event: 'e', userId: 'u' })
    expectTypeOf(sent).toEqualTypeOf<SentMessage<'track'>>()
    expectTypeOf(sent.type).toEqualTypeOf<'track'>()
    expectTypeOf(sent.messageId).toBeString()
    expectTypeOf(sent.timestamp).toBeString()
    expectTypeOf(sent.context.library).toEqualTypeOf<{ name: string; version: string }>()
    expectTypeOf(client.identify({ userId: 'u' })).not.toExtend<Promise<unknown>>()
  })

  it('flush and close resolve a FlushResult; stats are counters', () => {
    expectTypeOf(client.flush()).toEqualTypeOf<Promise<FlushResult>>()
    expectTypeOf(client.close(1000)).toEqualTypeOf<Promise<FlushResult>>()
    expectTypeOf<FlushResult>().toEqualTypeOf<{ delivered: number; failed: number }>()
    expectTypeOf(client.stats()).toEqualTypeOf<ClientStats>()
    expectTypeOf<keyof ClientStats>().toEqualTypeOf<'queued' | 'inFlight' | 'delivered' | 'failed' | 'dropped' | 'retries'>()
  })

  it('events are typed', () => {
    client.on('flush', (e) => expectTypeOf(e).toEqualTypeOf<ClientEvents['flush']>())
    client.on('retry', (e) => expectTypeOf(e.attempt).toBeNumber())
    // Delivered messages are a union discriminated by `type`.
    client.on('flush', ({ messages }) => {
      const [m] = messages
      if (m.type === 'track') expectTypeOf(m.event).toBeString()
      if (m.type === 'group') expectTypeOf(m.groupId).toBeString()
      if (m.type === 'alias') expectTypeOf(m.previousId).toBeString()
      // @ts-expect-error `event` is only known once `type` says track
      void m.event
    })
    client.on('error', (e) => expectTypeOf(e.messages).toEqualTypeOf<readonly unknown[]>())
    // @ts-expect-error unknown event name
    client.on('delivered', () => {})
  })

  it('options are checked', () => {
    new Client('key', { flushAt: 10, size: 10, gzip: true, endpoint: 'https://x.test' })
    // @ts-expect-error flushAt is a number
    new Client('key', { flushAt: '10' })
    // @ts-expect-error unknown option
    new Client('key', { flushInterval: 10 })
  })
})
