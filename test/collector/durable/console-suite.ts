/**
 * The console with a queue server, run once per server (Redis, PostgreSQL) against the same code:
 * collector processes (collector-process.mjs, on dist/) sharing one real server. Settings changed
 * through one process's admin endpoint reach the others and survive a restart; a delivery
 * accepted by one process and attempted by another shows its attempts in both consoles.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { QueueServerProcess } from '../../helpers/queue-servers.js'
import { startSigningReceiver } from '../../helpers/signing-receiver.js'
import { batchText, send, startCollector, startReceiver, stop, until, type CollectorProcess } from './support.js'

const NEW_SECRET = 'a-new-shared-secret-for-the-queue'

interface MessageRecord {
  id: string
  remote?: true
  message: { messageId?: string }
  delivery: { outcome: string; reason?: string; attempts: Array<{ attempt: number; results: Array<{ url: string; status?: number; error?: string }> }> }
}

function request(collector: CollectorProcess, path: string, init: { method?: string; body?: unknown } = {}) {
  return fetch(`${collector.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  })
}

async function sources(collector: CollectorProcess) {
  const answer = (await (await request(collector, '/v1/admin/sources')).json()) as {
    settings: { store: string; durable: boolean; notice?: string }
    sources: Array<{ name: string; webhooks: { enabled: boolean; urls: Array<{ url: string; headers?: Record<string, string> }>; sharedSecret: string | null } }>
  }
  return { settings: answer.settings, web: answer.sources.find((s) => s.name === 'web')!.webhooks }
}

async function messages(collector: CollectorProcess): Promise<MessageRecord[]> {
  return ((await (await request(collector, '/v1/admin/messages?limit=500')).json()) as { messages: MessageRecord[] }).messages
}

/**
 * Waits until each process hears the bus: its first request waits for that (a notice published
 * before a process is subscribed does not reach it: at most once).
 */
async function listening(...collectors: CollectorProcess[]) {
  await Promise.all(collectors.map(sources))
}

const byMessageId = (records: MessageRecord[], prefix: string) => records.filter((r) => r.message.messageId?.startsWith(prefix))

export function durableConsoleSuite(name: string, start: () => Promise<QueueServerProcess>): void {
  let server: QueueServerProcess
  const running: CollectorProcess[] = []
  const collector = async (env: Record<string, string>) => {
    const c = await startCollector({ QUEUE: server.url, ...env })
    running.push(c)
    return c
  }
  beforeAll(async () => {
    server = await start()
  }, 60_000)
  afterEach(async () => {
    await Promise.all(running.splice(0).map((c) => stop(c, 'SIGKILL')))
  })
  afterAll(async () => {
    await server?.stop()
  })

  describe(`the console on ${name}`, () => {
    // Last: the settings it saves in the server would apply to the processes of any later test.
    it('settings changed through one process apply to the next message of another, survive a restart; an invalid change changes nothing anywhere', async () => {
      const before = await startReceiver(() => 200)
      const after = await startSigningReceiver({ secret: NEW_SECRET })
      try {
        const [a, b] = await Promise.all([collector({ WEBHOOK: before.url }), collector({ WEBHOOK: before.url })])
        expect((await sources(a)).settings).toEqual({ store: 'queue', durable: true })
        const change = { urls: [{ url: after.url, headers: { 'X-Team': 'growth' } }], sharedSecret: NEW_SECRET }
        const put = await request(a, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: change })
        expect(put.status).toBe(200)
        expect(await put.json()).toMatchObject({ success: true, persisted: true })
        // B hears of it on the bus and applies it (shown by its own admin endpoint).
        await until(async () => (await sources(b)).web.urls[0]?.url === after.url, 'B to apply the change')
        expect((await sources(b)).web).toEqual({ enabled: true, urls: change.urls, sharedSecret: `••••${NEW_SECRET.slice(-4)}` })
        // Only B takes jobs now: its next message goes to the new URL, with the header, signed with the new secret.
        await stop(a)
        expect(await send(b.url, batchText(100, 1))).toBe(200)
        await until(() => after.accepted.length === 1, 'the delivery to the new URL')
        expect(after.accepted[0].signatureValid).toBe(true)
        expect(after.accepted[0].headers['x-team']).toBe('growth')
        expect(before.attempts).toHaveLength(0)
        await stop(b)

        // A restart (its config still names the old URL) starts with the saved settings.
        const c = await collector({ WEBHOOK: before.url })
        expect((await sources(c)).web.urls).toEqual(change.urls)
        expect(await send(c.url, batchText(101, 1))).toBe(200)
        await until(() => after.accepted.length === 2, 'the delivery after the restart')
        expect(after.accepted[1].signatureValid).toBe(true)

        // An invalid change: the config's error, and nothing changes here, in the server or elsewhere.
        const invalid = await request(c, '/v1/admin/sources/web/webhooks', { method: 'PUT', body: { urls: [{ url: after.url }, { url: 'ftp://example.com/hook' }] } })
        expect(invalid.status).toBe(400)
        expect(await invalid.json()).toMatchObject({ success: false, error: { code: 'VALIDATION', field: 'sources[0].webhooks.urls[1].url' } })
        expect((await sources(c)).web.urls).toEqual(change.urls)
        const d = await collector({ WEBHOOK: before.url })
        expect((await sources(d)).web.urls).toEqual(change.urls)
        expect(before.attempts).toHaveLength(0)
      } finally {
        await Promise.all([before.close(), after.close()])
      }
    }, 60_000)
  })
}
