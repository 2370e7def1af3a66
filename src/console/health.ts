/**
 * Each webhook URL's health (`GET /v1/admin/endpoints`, read every 5 s): a badge per URL (healthy,
 * failing, disabled) with its hour's attempts and failures and its last error; and for a disabled
 * URL a banner that says so, with "Enable" (confirmed first, disabled while its request runs) and
 * the choice to re-send what it missed while disabled (`POST /v1/admin/endpoints/enable`).
 */
import { api, ApiFailure } from './api.js'
import type { EndpointView } from '../collector/health/record.js'
import { h, replace, uid } from './dom.js'
import { polled } from './polled.js'
import { confirmed, counted, whileBusy } from './guard.js'

const STATES = { healthy: 'Healthy', failing: 'Failing', disabled: 'Disabled' } as const

/** Said under the banners after an enable (kept across refreshes until the next one). */
const said = h('p', { role: 'status', class: 'status' })

function banner(endpoint: EndpointView, refresh: () => Promise<void>): HTMLElement {
  const replay = h('input', { type: 'checkbox', id: uid('replay'), checked: true })
  const button = h('button', { type: 'button' }, `Enable ${endpoint.url}`)
  button.addEventListener('click', () => void whileBusy(button, async () => {
    const again = replay.checked ? ' and re-sends the messages it missed while disabled' : ''
    if (!(await confirmed(`This sends again to ${endpoint.url} (source ${endpoint.source})${again}.`, 'Enable'))) return
    try {
      const answer = await api<{ replayed?: number; notReplayed?: number }>('v1/admin/endpoints/enable', { method: 'POST', body: { source: endpoint.source, url: endpoint.url, replay: replay.checked } })
      const resent = answer.replayed === undefined ? '' : ` ${counted(answer.replayed, 'missed message')} re-sent${answer.notReplayed ? ` (${answer.notReplayed} could not be)` : ''}.`
      said.textContent = `${endpoint.url} enabled.${resent}`
      await refresh()
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      said.textContent = error.problem.message
    }
  }))
  const since = endpoint.disabledAt === null ? '' : ` since ${new Date(endpoint.disabledAt).toLocaleString()}`
  return h('div', { class: 'banner', role: 'alert' },
    h('p', {}, `Webhook URL ${endpoint.url} of source ${endpoint.source} is disabled${since}: every attempt to it failed for too long. Nothing is sent to it; its messages are kept as failed.`),
    endpoint.lastError === null ? null : h('p', { class: 'muted' }, `Last error: ${endpoint.lastError}`),
    h('p', { class: 'toggle' }, replay, h('label', { for: replay.id }, 'Re-send the messages it missed while disabled')),
    button,
  )
}

function badge(endpoint: EndpointView): HTMLElement {
  const hour = `${counted(endpoint.attempts1h, 'attempt')}, ${endpoint.failures1h} failed in the last hour`
  const streak = endpoint.consecutiveFailures > 0 ? `; ${counted(endpoint.consecutiveFailures, 'failure')} in a row` : ''
  return h('li', { class: `endpoint ${endpoint.state}` },
    h('span', { class: 'badge' }, STATES[endpoint.state]), ` ${endpoint.source}: ${endpoint.url} (${hour}${streak})`,
    endpoint.state !== 'healthy' && endpoint.lastError !== null ? h('span', { class: 'muted' }, ` Last error: ${endpoint.lastError}`) : null)
}

export function healthView(): { element: HTMLElement; start(): void; stop(): void } {
  const banners = h('div', {})
  const list = h('ul', { class: 'endpoints', 'aria-label': 'Webhook URLs' })
  // A banner is made again only when the disabled URLs change: a refresh never takes focus or a tick away.
  let shown = ''
  async function refresh(): Promise<void> {
    let endpoints: EndpointView[]
    try {
      endpoints = (await api<{ endpoints: EndpointView[] }>('v1/admin/endpoints')).endpoints
    } catch {
      return // The live view reports the collector being unreachable; this keeps its last picture.
    }
    replace(list, ...endpoints.map(badge))
    const disabled = endpoints.filter((e) => e.state === 'disabled')
    const key = JSON.stringify(disabled.map((e) => [e.source, e.url, e.disabledAt]))
    if (key !== shown) replace(banners, ...disabled.map((e) => banner(e, refresh)))
    shown = key
  }
  const element = h('section', { 'aria-labelledby': 'health-heading' },
    h('h2', { id: 'health-heading' }, 'Webhook URLs'), banners, said, list)
  return polled(element, refresh)
}
