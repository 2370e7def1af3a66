import { after } from 'next/server'
import { analytics } from '../../../lib/analytics'

export const runtime = 'edge'

// An edge route: the fetch transport; after() sends the batch once the response is out.
export async function GET(): Promise<Response> {
  const { messageId } = analytics().track({ anonymousId: 'visitor-1', event: 'Edge Called' })
  after(() => analytics().flush())
  return Response.json({ messageIds: [messageId] })
}
