import { Client } from 'isomorphic-analytics'

let client: Client | undefined

/**
 * The server's one client, made on first use: `next build` evaluates this module without
 * WRITE_KEY. `next start` answers SIGTERM with process.exit(143): `spill` keeps what is still
 * queued or in flight then, and the next `next start` sends it when it makes its client.
 */
export const analytics = (): Client => {
  if (client) return client
  client = new Client(process.env.WRITE_KEY!, {
    endpoint: process.env.ANALYTICS_ENDPOINT,
    spill: { dir: '.analytics-spill' },
  })
  client.on('error', (error) => console.error(`analytics error: ${error.message} (${error.messages.length} messages)`))
  return client
}
