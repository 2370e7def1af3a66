/**
 * Audience syncs and deletion requests, through `POST /v1/audiences` and `POST /v1/deletions`.
 * Their payloads' deliveries are in the live view, which a button after each request shows. A
 * deletion, a sync that removes members and a sync with an empty Members box are sent only once
 * confirmed, in words that name what they do; a form's button is disabled while its request runs.
 */
import { api, ApiFailure, type SourceView } from './api.js'
import { h, replace, uid, type Child } from './dom.js'
import { confirmed, counted, someOf, whileBusy } from './guard.js'
import { AUDIENCE } from './live.js'

export function field(label: string, control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement): HTMLElement[] {
  control.id = uid('action')
  return [h('label', { for: control.id }, label), control]
}

/** A form whose `send` resolves to what to say, or to `undefined` when it was not confirmed. */
export function actionForm(title: string, submit: string, controls: HTMLElement[], send: () => Promise<Child[] | undefined>): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const button = h('button', { type: 'submit' }, submit)
  const onsubmit = (event: Event) => {
    event.preventDefault()
    void whileBusy(button, async () => {
      status.textContent = ''
      try {
        const said = await send()
        if (said === undefined) status.textContent = 'Not sent.'
        else replace(status, ...said)
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error
        status.textContent = error.problem.message
      }
    })
  }
  return h('form', { 'aria-label': title, onsubmit }, h('h3', {}, title), ...controls, button, status)
}

/**
 * Whether to send a sync of `audience` with `members`: at once when it removes nobody; else once
 * confirmed, naming whom it removes (from the membership its last sync left). An empty Members
 * box always asks.
 */
async function syncConfirmed(source: string, audience: string, members: string[]): Promise<boolean> {
  const query = new URLSearchParams({ source, audience })
  const now = await api<{ synced: boolean; members: string[] }>(`v1/admin/audiences?${query}`)
  const kept = new Set(members)
  const removed = now.members.filter((m) => !kept.has(m))
  const added = members.length - (now.members.length - removed.length)
  const name = JSON.stringify(audience)
  if (members.length === 0) {
    return confirmed(removed.length > 0
      ? `The Members box is empty: this sync removes all ${counted(removed.length, 'member')} of ${name} (${someOf(removed)}).`
      : `The Members box is empty: this sync sends nothing, and ${name} ${now.synced ? 'stays' : 'is remembered as'} empty.`,
    removed.length > 0 ? `Remove all ${counted(removed.length, 'member')}` : 'Sync an empty audience')
  }
  if (removed.length === 0) return true
  return confirmed(
    `This sync removes ${counted(removed.length, 'member')} of ${name} (${someOf(removed)})${added > 0 ? ` and adds ${added}` : ''}.`,
    `Remove ${counted(removed.length, 'member')}`)
}

/** Whether to ask the receivers of the sources forwarding to webhooks now to delete `userId`'s data. */
async function deletionConfirmed(userId: string): Promise<boolean> {
  const { sources } = await api<{ sources: SourceView[] }>('v1/admin/sources')
  const forwarding = sources.filter((s) => s.webhooks.enabled).map((s) => s.name)
  const whom = forwarding.length > 0 ? `the webhook receivers of ${someOf(forwarding, 10)}` : 'no receiver (no source forwards to webhooks now)'
  return confirmed(`This asks ${whom} to delete everything they hold about user ${JSON.stringify(userId)}. It cannot be undone.`, `Delete user ${JSON.stringify(userId)}`)
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
    async () => {
      const body = { source: source.value, audience: audience.value, members: [...new Set(members.value.split('\n').map((m) => m.trim()).filter(Boolean))] }
      if (body.audience.trim() !== '' && !(await syncConfirmed(body.source, body.audience, body.members))) return undefined
      return sent(await api('v1/audiences', { method: 'POST', body }), 'audience syncs', AUDIENCE, show)
    })
  const deletionForm = actionForm('Deletion request', 'Request deletion', field('User id', userId),
    async () => {
      if (userId.value.trim() !== '' && !(await deletionConfirmed(userId.value))) return undefined
      return sent(await api('v1/deletions', { method: 'POST', body: { userId: userId.value } }), 'deletion requests', 'delete', show)
    })
  return h('section', { 'aria-labelledby': 'actions-heading', class: 'actions' },
    h('h2', { id: 'actions-heading' }, 'Audiences and deletions'), audienceForm, deletionForm)
}
