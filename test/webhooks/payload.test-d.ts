import { describe, expectTypeOf, it } from 'vitest'
import {
  toWebhookPayload,
  type AliasWebhookPayload,
  type DeleteWebhookPayload,
  type TrackWebhookPayload,
  type WebhookPayload,
  type WebhookPayloadOf,
} from '../../src/webhooks/index.js'

describe('WebhookPayload', () => {
  it('narrows on `type`', () => {
    const handle = (payload: WebhookPayload) => {
      switch (payload.type) {
        case 'track':
          expectTypeOf(payload).toEqualTypeOf<TrackWebhookPayload>()
          expectTypeOf(payload.event).toEqualTypeOf<string>()
          expectTypeOf(payload.properties).toEqualTypeOf<Record<string, unknown>>()
          expectTypeOf(payload.version).toEqualTypeOf<1>()
          break
        case 'alias':
          expectTypeOf(payload['Previous ID']).toEqualTypeOf<string>()
          expectTypeOf(payload['User ID']).toEqualTypeOf<string>()
          expectTypeOf(payload.previousId).toEqualTypeOf<string>()
          expectTypeOf(payload.userId).toEqualTypeOf<string>()
          break
        case 'group':
          expectTypeOf(payload.groupId).toEqualTypeOf<string>()
          expectTypeOf(payload.traits).toEqualTypeOf<Record<string, unknown>>()
          break
        case 'screen':
          expectTypeOf(payload.name).toEqualTypeOf<string | undefined>()
          break
        case 'delete':
          expectTypeOf(payload).toEqualTypeOf<DeleteWebhookPayload>()
          expectTypeOf(payload).not.toHaveProperty('version')
          expectTypeOf(payload).not.toHaveProperty('context')
          expectTypeOf(payload.userId).toEqualTypeOf<string>()
          break
        default:
          expectTypeOf(payload.type).toEqualTypeOf<'page' | 'identify'>()
          expectTypeOf(payload.context).toEqualTypeOf<Record<string, unknown>>()
          expectTypeOf(payload.messageId).toEqualTypeOf<string | undefined>()
      }
    }
    expectTypeOf(handle).parameter(0).toEqualTypeOf<WebhookPayload>()
  })

  it('toWebhookPayload returns the payload type of the input type', () => {
    expectTypeOf(toWebhookPayload({ type: 'track', event: 'e', userId: 'u' })).toEqualTypeOf<TrackWebhookPayload>()
    expectTypeOf(toWebhookPayload({ type: 'alias', userId: 'u', previousId: 'p' })).toEqualTypeOf<AliasWebhookPayload>()
    expectTypeOf(toWebhookPayload({ type: 'delete', userId: 'u' })).toEqualTypeOf<DeleteWebhookPayload>()
    expectTypeOf(toWebhookPayload({ type: 'delete', userId: 'u' })).not.toHaveProperty('version')
    const parsed: Record<string, unknown> = JSON.parse('{}')
    expectTypeOf(toWebhookPayload(parsed)).toEqualTypeOf<WebhookPayload>()
    expectTypeOf<WebhookPayloadOf<'group'>['type']>().toEqualTypeOf<'group'>()
  })
})
