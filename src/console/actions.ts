/**
 * Audience syncs and deletion requests, through `POST /v1/audiences` and `POST /v1/deletions`.
 * Their payloads' deliveries are in the live view, which a button after each request shows.
 */
import { api, ApiFailure, type SourceView } from './api.js'
import { h, replace, uid, type Child } from './dom.js'
import { AUDIENCE } from './live.js'

function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement): HTMLElement[] {
  control.id = uid('action')
  return [h('label', { for: control.id }, label), control]
}

function actionForm(title: string, submit: string, controls: HTMLElement[], send: () => Promise<Child[]>): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const onsubmit = async (event: Event) => {
    event.preventDefault()
    status.textContent = ''
    try {
      replace(status, ...(await send()))
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      status.textContent = error.problem.message
    }
  }
  return h('form', { 'aria-label': title, onsubmit: (event: Event) => void onsubmit(event) },
    h('h3', {}, title), ...controls, h('button', { type: 'submit' }, submit), status)
}

/** How many payloads of one audience sync the collector's record follows (src/collector/admin/dispatch.ts). */
const RECORDED_PER_SYNC = 100

/** What was sent, and a button to its deliveries in the live view (`type`: its filter). */
function sent(answer: { sources: string[]; sent: number }, what: string, type: string, show: (type: string) => void): Child[] {
  const text = `Sent ${answer.sent} payload(s)${answer.sources.length > 0 ? ` to ${answer.sources.join(', ')}` : ''}.`
  if (answer.sent === 0) return [text]
  const some = type === AUDIENCE && answer.sent > RECORDED_PER_SYNC ? ` (the first ${RECORDED_PER_SYNC})` : ''
  return [`${text} Deliveries${some} are followed in Live events. `,
    h('button', { type: 'button', onclick: () => show(type) }, `Show ${what} in Live events`)]
}

export function actionsView(sources: SourceView[], show: (type: string) => void): HTMLElement {
  const source = h('select', {}, ...sources.map((s) => h('option', { value: s.name }, s.name)))
  const audience = h('input', { type: 'text', required: true })
  const members = h('textarea', { rows: 3, placeholder: 'one user id per line' })
  const userId = h('input', { type: 'text', required: true })
  const audienceForm = actionForm('Audience sync', 'Sync audience',
    [...field('Source', source), ...field('Audience', audience), ...field('Members', members)],
    async () => sent(await api('v1/audiences', {
      method: 'POST',
      body: { source: source.value, audience: audience.value, members: members.value.split('\n').map((m) => m.trim()).filter(Boolean) },
    }), 'audience syncs', AUDIENCE, show))
  const deletionForm = actionForm('Deletion request', 'Request deletion', field('User id', userId),
    async () => sent(await api('v1/deletions', { method: 'POST', body: { userId: userId.value } }), 'deletion requests', 'delete', show))
  return h('section', { 'aria-labelledby': 'actions-heading', class: 'actions' },
    h('h2', { id: 'actions-heading' }, 'Audiences and deletions'), audienceForm, deletionForm)
}
