import { describe, expectTypeOf, it } from 'vitest'
import * as v from 'valibot'
import { z } from 'zod'
import { Client, type SentMessage, type TrackMessage } from '../../src/index.js'

interface Events {
  'Order Completed': { orderId: string; total: number; coupon?: string }
  'Signed Up': { plan?: 'free' | 'pro' }
  'Logged Out': undefined
}
interface Traits { email: string; name?: string }
interface Company { employees: number }

describe('new Client<Events>()', () => {
  const client = new Client<Events, Traits, Company>('key')

  it('accepts the planned events with their properties', () => {
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o', total: 9.5 } })
    client.track({ event: 'Order Completed', anonymousId: 'a', properties: { orderId: 'o', total: 1, coupon: 'X' } })
    // Optional properties: the object, or all of `properties`, may be left out.
    client.track({ event: 'Signed Up', userId: 'u' })
    client.track({ event: 'Signed Up', userId: 'u', properties: { plan: 'pro' } })
    client.track({ event: 'Logged Out', userId: 'u' })
    expectTypeOf(client.track({ event: 'Logged Out', userId: 'u' })).toEqualTypeOf<SentMessage<'track'>>()
  })

  it('rejects unplanned names, missing and mistyped properties', () => {
    // @ts-expect-error a typo is not a planned event
    client.track({ event: 'Order Complete', userId: 'u', properties: { orderId: 'o', total: 1 } })
    // @ts-expect-error `properties` is required when the event has required keys
    client.track({ event: 'Order Completed', userId: 'u' })
    // @ts-expect-error `total` is required
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o' } })
    // @ts-expect-error a price sent as a string
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o', total: '9.50' } })
    // @ts-expect-error an unplanned property (excess property check)
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o', total: 1, totl: 1 } })
    // @ts-expect-error a literal union is checked
    client.track({ event: 'Signed Up', userId: 'u', properties: { plan: 'gold' } })
    // (Ids are optional: option identity fills them in.)
    client.track({ event: 'Logged Out' })
    // @ts-expect-error an unplanned event name
    client.track({ event: 'Logged In' })
  })

  it('lists the event names for completion', () => {
    type Arg = Parameters<typeof client.track>[0]
    expectTypeOf<Arg['event']>().toEqualTypeOf<'Order Completed' | 'Signed Up' | 'Logged Out'>()
  })

  it('types identify and group traits', () => {
    client.identify({ userId: 'u', traits: { email: 'e@x.test' } })
    client.identify({ anonymousId: 'a' })
    // @ts-expect-error email must be a string
    client.identify({ userId: 'u', traits: { email: 1 } })
    // @ts-expect-error email is required in the traits
    client.identify({ userId: 'u', traits: { name: 'n' } })
    client.group({ userId: 'u', groupId: 'g', traits: { employees: 5 } })
    // @ts-expect-error employees is a number
    client.group({ userId: 'u', groupId: 'g', traits: { employees: 'five' } })
    // @ts-expect-error groupId is still required
    client.group({ userId: 'u', traits: { employees: 5 } })
  })
})

describe('traits whose keys are all optional (as traits usually are)', () => {
  interface Profile { email?: string; age?: number }
  interface Team { employees?: number }
  const client = new Client<Events, Profile, Team>('key')

  it('are still checked: types, and unknown keys', () => {
    client.identify({ userId: 'u', traits: { email: 'e@x.test' } })
    client.identify({ userId: 'u', traits: {} })
    // @ts-expect-error email must be a string
    client.identify({ userId: 'u', traits: { email: 42 } })
    // @ts-expect-error a typo is not a trait
    client.identify({ userId: 'u', traits: { agee: 3 } })
    client.group({ userId: 'u', groupId: 'g', traits: { employees: 5 } })
    // @ts-expect-error employees is a number
    client.group({ userId: 'u', groupId: 'g', traits: { employees: 'many' } })
    // @ts-expect-error a typo is not a trait
    client.group({ userId: 'u', groupId: 'g', traits: { employes: 5 } })
  })
})

describe('without a type argument', () => {
  it('accepts any event and properties, as before', () => {
    const client = new Client('key')
    client.track({ event: 'Anything', userId: 'u', properties: { x: 1, y: 'z' } })
    client.identify({ userId: 'u', traits: { whatever: true } })
    client.group({ userId: 'u', groupId: 'g', traits: { any: 1 } })
    expectTypeOf<Parameters<typeof client.track>[0]>().toEqualTypeOf<TrackMessage>()
  })
})

describe('Events inferred from option `schema`', () => {
  it('zod: planned names and property types come from the schemas', () => {
    const client = new Client('key', {
      schema: {
        'Order Completed': z.object({ orderId: z.string(), total: z.number(), coupon: z.string().optional() }),
        'Signed Up': z.object({ plan: z.enum(['free', 'pro']).optional() }),
      },
    })
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o', total: 3 } })
    client.track({ event: 'Signed Up', userId: 'u' })
    // @ts-expect-error not in the schema map
    client.track({ event: 'Order Complete', userId: 'u', properties: { orderId: 'o', total: 3 } })
    // @ts-expect-error total is a number
    client.track({ event: 'Order Completed', userId: 'u', properties: { orderId: 'o', total: '3' } })
    // @ts-expect-error orderId is required
    client.track({ event: 'Order Completed', userId: 'u', properties: { total: 3 } })
  })

  it('valibot works the same way', () => {
    const client = new Client('key', { schema: { Searched: v.object({ query: v.string() }) } })
    client.track({ event: 'Searched', userId: 'u', properties: { query: 'q' } })
    // @ts-expect-error query is a string
    client.track({ event: 'Searched', userId: 'u', properties: { query: 1 } })
  })

  it('a schema must match an explicit Events map', () => {
    new Client<Events>('key', { schema: { 'Order Completed': z.object({ orderId: z.string(), total: z.number(), coupon: z.string().optional() }) } })
    // @ts-expect-error total's schema disagrees with the Events map
    new Client<Events>('key', { schema: { 'Order Completed': z.object({ orderId: z.string(), total: z.string() }) } })
    // @ts-expect-error not a Standard Schema
    new Client('key', { schema: { 'Order Completed': { parse: () => 1 } } })
  })
})
