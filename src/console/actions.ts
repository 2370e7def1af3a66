/** Audience syncs and deletion requests, through `POST /v1/audiences` and `POST /v1/deletions`. */
import { api, ApiFailure, type SourceView } from './api.js'
import { h, uid } from './dom.js'

function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement): HTMLElement[] {
  control.id = uid('action')
  return [h('label', { for: control.id }, label), control]
}

function actionForm(title: string, submit: string, controls: HTMLElement[], send: () => Promise<string>): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const onsubmit = async (event: Event) => {
    event.preventDefault()
    status.textContent = ''
    try {
      status.textContent = await send()
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      status.textContent = error.problem.message
    }
  }
  return h('form', { 'aria-label': title, onsubmit: (event: Event) => void onsubmit(event) },
    h('h3', {}, title), ...controls, h('button', { type: 'submit' }, submit), status)
}

const sent = (answer: { sources: string[]; sent: number }) =>
  `Sent ${answer.sent} payload(s)${answer.sources.length > 0 ? ` to ${answer.sources.join(', ')}` : ''}.`

export function actionsView(sources: SourceView[]): HTMLElement {
  const source = h('select', {}, ...sources.map((s) => h('option', { value: s.name }, s.name)))
  const audience = h('input', { type: 'text', required: true })
  const members = h('textarea', { rows: 3, placeholder: 'one user id per line' })
  const userId = h('input', { type: 'text', required: true })
  const audienceForm = actionForm('Audience sync', 'Sync audience',
    [...field('Source', source), ...field('Audience', audience), ...field('Members', members)],
    async () => sent(await api('v1/audiences', {
      method: 'POST',
      body: { source: source.value, audience: audience.value, members: members.value.split('\n').map((m) => m.trim()).filter(Boolean) },
    })))
  const deletionForm = actionForm('Deletion request', 'Request deletion', field('User id', userId),
    async () => sent(await api('v1/deletions', { method: 'POST', body: { userId: userId.value } })))
  return h('section', { 'aria-labelledby': 'actions-heading', class: 'actions' },
    h('h2', { id: 'actions-heading' }, 'Audiences and deletions'), audienceForm, deletionForm)
}
