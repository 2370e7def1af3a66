/**
 * The live view's search: by type, event name, user id, anonymous id and delivery outcome. Each
 * keystroke filters what the page holds at once (live.ts only hides and shows items: none is
 * rebuilt). Once typing pauses, the same filters ask the collector (`GET /v1/admin/messages`,
 * exact match) for every record it holds that matches, so a search reaches records the page does
 * not hold; those join the page's records (`onFound`).
 */
import { api, ApiFailure, type MessageRecord, type MessagesAnswer } from './api.js'
import { h, uid } from './dom.js'

const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias', 'delete']
const OUTCOMES = ['queued', 'retrying', 'delivered', 'failed']
/** The type filter's choice for an audience sync's identifies. */
export const AUDIENCE = 'audience'
/** How long typing pauses before the collector is asked (ms). */
const PAUSE = 300
/** At most this many records are asked of the collector per search. */
const ASKED = 500

export interface Search {
  element: HTMLElement
  /** Whether `record` matches what the form holds (text fields: contained, ignoring case). */
  matches(record: MessageRecord): boolean
  /** Shows the records of one type (or `AUDIENCE`) only, and brings the form into view. */
  only(type: string): void
  stop(): void
}

export function searchForm(onChange: () => void, onFound: (records: MessageRecord[]) => void): Search {
  const type = h('select', { id: uid('type') },
    h('option', { value: '' }, 'All types'), ...TYPES.map((t) => h('option', { value: t }, t)), h('option', { value: AUDIENCE }, 'audience sync'))
  const text = (prefix: string) => h('input', { type: 'search', id: uid(prefix), autocomplete: 'off', spellcheck: false })
  const event = text('event')
  const userId = text('user')
  const anonymousId = text('anonymous')
  const outcome = h('select', { id: uid('outcome') }, h('option', { value: '' }, 'Any outcome'), ...OUTCOMES.map((o) => h('option', { value: o }, o)))
  const status = h('p', { role: 'status', class: 'muted search-status' })
  let values = { type: '', event: '', userId: '', anonymousId: '', outcome: '' }
  let timer: ReturnType<typeof setTimeout> | undefined
  let asking: AbortController | undefined

  const contains = (value: string | undefined, wanted: string) => wanted === '' || (value ?? '').toLowerCase().includes(wanted)
  const matches = (r: MessageRecord) => {
    const v = values
    return (v.type === '' || (v.type === AUDIENCE ? r.origin === AUDIENCE : r.type === v.type))
      && contains(r.name, v.event) && contains(r.userId, v.userId) && contains(r.anonymousId, v.anonymousId)
      && (v.outcome === '' || r.delivery.outcome === v.outcome)
  }

  /** Asks the collector for the records matching the form exactly. */
  async function ask(): Promise<void> {
    asking?.abort()
    const query = new URLSearchParams()
    if (type.value !== '') query.set(type.value === AUDIENCE ? 'origin' : 'type', type.value)
    for (const [name, control] of [['event', event], ['userId', userId], ['anonymousId', anonymousId], ['outcome', outcome]] as const) {
      if (control.value.trim() !== '') query.set(name, control.value.trim())
    }
    if (query.toString() === '') {
      status.textContent = ''
      return
    }
    query.set('limit', String(ASKED))
    const controller = (asking = new AbortController())
    try {
      const answer = await api<MessagesAnswer>(`v1/admin/messages?${query}`, { signal: controller.signal })
      if (controller.signal.aborted) return
      onFound(answer.messages)
      const count = answer.messages.length
      status.textContent = `The collector holds ${count === ASKED ? `at least ${count}` : count} message${count === 1 ? '' : 's'} matching exactly.`
    } catch (error) {
      if (controller.signal.aborted) return
      if (!(error instanceof ApiFailure)) throw error
      status.textContent = `The collector could not be searched: ${error.problem.message}`
    }
  }

  const changed = () => {
    values = {
      type: type.value,
      event: event.value.trim().toLowerCase(),
      userId: userId.value.trim().toLowerCase(),
      anonymousId: anonymousId.value.trim().toLowerCase(),
      outcome: outcome.value,
    }
    onChange()
    clearTimeout(timer)
    timer = setTimeout(() => void ask(), PAUSE)
  }
  for (const control of [type, outcome]) control.addEventListener('change', changed)
  for (const control of [event, userId, anonymousId]) control.addEventListener('input', changed)

  const labelled = (label: string, control: HTMLElement) => h('span', { class: 'filter' }, h('label', { for: control.id }, label), control)
  const element = h('form', { role: 'search', 'aria-label': 'Search messages', class: 'filters', onsubmit: (e: Event) => (e.preventDefault(), void ask()) },
    labelled('Type', type), labelled('Event name', event), labelled('User ID', userId), labelled('Anonymous ID', anonymousId), labelled('Outcome', outcome),
    status)
  return {
    element,
    matches,
    only(wanted) {
      type.value = wanted
      for (const control of [event, userId, anonymousId]) control.value = ''
      outcome.value = ''
      changed()
      type.focus()
    },
    stop() {
      clearTimeout(timer)
      asking?.abort()
    },
  }
}
