'use server'

import { after } from 'next/server'
import { analytics } from '../lib/analytics'

/** A server action: tracks, and sends the batch once the action has answered. */
export async function subscribe(email: string): Promise<string> {
  const { messageId } = analytics().track({ userId: email, event: 'Subscribed', properties: { via: 'server action' } })
  after(() => analytics().flush())
  return messageId
}
