import { after } from 'next/server'
import { analytics } from '../../../lib/analytics'

// A Node route handler: the batch is sent once the response is out.
export async function POST(request: Request): Promise<Response> {
  const { email } = (await request.json()) as { email: string }
  const { messageId } = analytics().track({ userId: email, event: 'Signed Up', properties: { via: 'route handler' } })
  after(() => analytics().flush())
  return Response.json({ messageIds: [messageId] })
}
