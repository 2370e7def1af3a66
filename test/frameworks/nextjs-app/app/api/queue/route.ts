import { analytics } from '../../../lib/analytics'

// Leaves delivery to the client's batching (20 messages or 5 s): what a SIGTERM cuts short is
// spilled and sent by the next `next start`.
export async function POST(request: Request): Promise<Response> {
  const { count } = (await request.json()) as { count: number }
  const messageIds = Array.from({ length: count }, (_, n) =>
    analytics().track({ anonymousId: 'visitor-1', event: 'Item Viewed', properties: { n } }).messageId)
  return Response.json({ messageIds })
}
