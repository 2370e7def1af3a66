/**
 * Replay, through `POST /v1/admin/replay`: a source, a time window (local time), failed payloads
 * only or all, every URL or one. Sent once confirmed, in words that say what goes out again; the
 * button is disabled while the request runs, and the answer says how many are replaying and how
 * many of the window were no longer kept. The replays show in Live events, marked "replay".
 */
import { api, type SourceView } from './api.js'
import { actionForm, field } from './actions.js'
import { h, replace } from './dom.js'
import { confirmed, counted } from './guard.js'

/** A `datetime-local` value as ISO 8601 (the browser's time zone); empty or unreadable: as typed, for the collector to refuse. */
function instant(value: string): string {
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? value : date.toISOString()
}

export function replayView(sources: SourceView[]): HTMLElement {
  const forwarding = sources.filter((s) => s.webhooks.enabled)
  const source = h('select', {}, ...forwarding.map((s) => h('option', { value: s.name }, s.name)))
  const from = h('input', { type: 'datetime-local', step: 1, required: true })
  const to = h('input', { type: 'datetime-local', step: 1, required: true })
  const outcome = h('select', {}, h('option', { value: 'failed' }, 'Failed deliveries only'), h('option', { value: 'all' }, 'All deliveries'))
  const url = h('select', {})
  const urls = () => replace(url, h('option', { value: '' }, 'Every URL'),
    ...(forwarding.find((s) => s.name === source.value)?.webhooks.urls ?? []).map((u) => h('option', { value: u.url }, u.url)))
  source.addEventListener('change', urls)
  urls()
  const form = actionForm('Replay a time window', 'Replay',
    [...field('Source', source), ...field('From', from), ...field('To', to), ...field('Deliveries', outcome), ...field('URL', url)],
    async () => {
      const body = { source: source.value, from: instant(from.value), to: instant(to.value), outcome: outcome.value, ...(url.value && { url: url.value }) }
      const what = `${outcome.value === 'failed' ? 'the failed deliveries' : 'every delivery'} of "${body.source}" accepted from ${from.value.replace('T', ' ')} to ${to.value.replace('T', ' ')}`
      if (from.value !== '' && to.value !== '' && !(await confirmed(`This sends ${what} again, to ${url.value ? url.value : 'every URL of the source'}: the same payloads, which receivers may already have.`, 'Replay'))) return undefined
      const answer = await api<{ replaying: number; unavailable: number }>('v1/admin/replay', { method: 'POST', body })
      return [`Replaying ${answer.replaying}; ${answer.unavailable} no longer kept.${answer.replaying > 0 ? ` Their deliveries show in Live events, marked "replay".` : ''}`]
    })
  return h('section', { 'aria-labelledby': 'replay-heading', class: 'actions' },
    h('h2', { id: 'replay-heading' }, 'Replay'),
    h('p', { class: 'muted' }, `Payloads are kept for replay for the collector's retention (24 hours by default). ${counted(forwarding.length, 'source')} forward to webhooks.`),
    form)
}
