/**
 * The live view (the debugger): messages as they arrive, newest first, searched by type, event
 * name, user, anonymous id and outcome (search.ts), each with its raw JSON on demand and its
 * deliveries (each attempt's outcome per URL, the next retry, the outcome); a failed delivery can
 * be retried. The payloads of deletion requests (type `delete`) and audience syncs (identifies
 * named after the audience) are listed the same way, marked as such. It follows the collector's
 * event stream of records changed since the last one it has. The newest `PAGE` matching records
 * are shown, and "Show more" shows the next ones, up to all that are listed.
 */
import { api, ApiFailure, apiStream, type MessageRecord, type MessagesAnswer } from './api.js'
import { attemptsView } from './attempts.js'
import { h } from './dom.js'
import { whileBusy } from './guard.js'
import { searchForm } from './search.js'

export { AUDIENCE } from './search.js'
const ORIGINS = { deletion: 'deletion request', audience: 'audience sync' }
/** Records listed at most (the newest that match), and kept: the collector's own record holds 500. */
const SHOWN = 500
/**
 * Records shown at first, after each change of the search, and added by each "Show more". The
 * browser's style, layout and paint of the items a keystroke shows again grow with their number;
 * this many keep a keystroke within the console's 50 ms (docs/performance.md has the figures).
 */
const PAGE = 50

const time = (iso: string) => new Date(iso).toLocaleTimeString()

/** What a record is called (its item's name): an admin payload's adds its user. */
const labelOf = (r: MessageRecord) => `${r.type} ${r.name ?? ''}${r.origin ? ` ${r.userId ?? ''}` : ''}`.replace(/ +/g, ' ').trim()

export function liveView(): { element: HTMLElement; start(): void; stop(): void; show(type: string): void } {
  const records = new Map<string, MessageRecord>()
  const open = new Set<string>()
  let version = 0
  /** The collector process the records come from ('' until the first answer). */
  let boot = ''
  /** Records a search found that the page would otherwise drop (they are older than its newest). */
  let found = new Set<string>()
  /** How many matching records are shown: `PAGE` again whenever the search changes. */
  let limit = PAGE
  const search = searchForm(() => {
    limit = PAGE
    render()
  }, (messages) => {
    found = new Set(messages.map((r) => r.id))
    for (const record of messages) {
      const known = records.get(record.id)
      if (known === undefined || known.version < record.version) records.set(record.id, record)
    }
    render()
  })
  const list = h('ol', { class: 'messages', id: 'messages', 'aria-label': 'Messages', tabindex: -1 })
  /** The stream's trouble: hidden again by its next answer. */
  const problem = h('p', { role: 'alert', class: 'field-error', hidden: true })
  /** Durable mode: how many successes the follow bound left out of the list. */
  const unlisted = h('p', { class: 'muted unlisted', role: 'status', hidden: true })
  /** Why a retry by hand was refused: its own element, so that live updates do not hide it. */
  const retryProblem = h('p', { role: 'alert', class: 'field-error', hidden: true })
  /** The items on the page by record id, with what they show: only a changed record's is rebuilt. */
  let items = new Map<string, { version: number; expanded: boolean; element: HTMLElement }>()
  /** Each opened record's forwarded payload (the exact body its receivers got), once loaded; `null`: none held. */
  const payloads = new Map<string, string | null>()
  /** Aborts the stream when the page signs out (`stop`). */
  const stopping = new AbortController()

  async function retry(record: MessageRecord): Promise<void> {
    try {
      await api(`v1/admin/messages/${encodeURIComponent(record.id)}/retry`, { method: 'POST' })
      retryProblem.hidden = true
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error
      retryProblem.textContent = error.problem.message
      retryProblem.hidden = false
    }
  }

  /** The forwarded payload's element of record `id`: filled once `GET /v1/admin/messages/{id}` answers. */
  function payloadOf(record: MessageRecord, label: string): HTMLElement {
    const element = h('pre', { class: 'payload', 'aria-label': `Payload as forwarded of ${label}` })
    const show = (payload: string | null) => {
      element.textContent = payload ?? 'Not held here: the message was not forwarded, or was too large to share from the collector process that accepted it.'
    }
    const known = payloads.get(record.id)
    if (known !== undefined) show(known)
    else {
      element.textContent = 'Loading…'
      api<{ payload?: string }>(`v1/admin/messages/${encodeURIComponent(record.id)}`).then((answer) => {
        payloads.set(record.id, answer.payload ?? null)
        show(answer.payload ?? null)
      }, (error: unknown) => {
        element.textContent = error instanceof ApiFailure ? error.problem.message : String(error)
      })
    }
    return element
  }

  function item(record: MessageRecord): HTMLElement {
    const { delivery } = record
    const detailsId = `message-${record.id}`
    const expanded = open.has(record.id)
    const label = labelOf(record)
    const toggle = h('button', {
      type: 'button', 'data-action': 'details', 'aria-expanded': String(expanded), 'aria-controls': detailsId,
      onclick: () => (expanded ? open.delete(record.id) : open.add(record.id), render()),
    }, `Details of ${label}`)
    const outcome = delivery.reason ? `${delivery.outcome}: ${delivery.reason}` : delivery.outcome
    return h('li', { class: `message ${delivery.outcome.replace(' ', '-')}`, 'aria-label': label },
      h('p', { class: 'summary' },
        h('span', { class: 'type' }, record.type), ' ',
        h('strong', { class: 'name' }, record.name ?? ''), ' ',
        h('span', { class: 'muted' }, `${[record.source, record.userId, record.anonymousId && `anonymous ${record.anonymousId}`].filter(Boolean).join(' · ')} · ${time(record.receivedAt)}${record.origin ? ` · ${ORIGINS[record.origin]}` : ''}${record.remote ? ' · via another collector' : ''}${record.replay ? ' · replay' : ''}`), ' ',
        h('span', { class: 'outcome' }, outcome),
        delivery.nextRetryAt ? h('span', { class: 'muted' }, ` · next retry ${time(delivery.nextRetryAt)}`) : null,
      ),
      toggle,
      delivery.outcome === 'failed'
        ? h('button', { type: 'button', 'data-action': 'retry', onclick: (event: Event) => void whileBusy(event.currentTarget as HTMLButtonElement, () => retry(record)) }, `Retry delivery of ${label}`)
        : null,
      expanded
        ? h('div', { id: detailsId, class: 'details' },
            attemptsView(record, label),
            delivery.outcome === 'not forwarded' || delivery.outcome === 'blocked' ? null : h('h3', {}, 'Payload as forwarded (the exact body each URL got)'),
            delivery.outcome === 'not forwarded' || delivery.outcome === 'blocked' ? null : payloadOf(record, label),
            h('h3', {}, 'Message as accepted'),
            // An integer beyond 2^53 is `JSON.rawJSON` of its digits here (api.ts): written as received.
            h('pre', { 'aria-label': `Raw JSON of ${label}` }, JSON.stringify(record.message, null, 2)))
        : null,
    )
  }

  /** Shown when no record is: its own element, so that the list holds items only. */
  const empty = h('p', { class: 'muted' }, 'No messages yet.')
  /** The items shown, in order (the first of those "Show more" adds gets focus). */
  let shown: HTMLElement[] = []
  const moreText = h('span', {})
  const moreButton = h('button', { type: 'button', onclick: () => showMore() })
  /** Says how many matching records are not shown yet, with the button that shows the next ones. */
  const more = h('p', { class: 'more', hidden: true }, moreText, ' ', moreButton)

  /** Shows the next `PAGE` matching records; focus moves to the first of them. */
  function showMore(): void {
    const first = shown.length
    limit = first + PAGE
    render()
    shown[first]?.querySelector<HTMLElement>('[data-action="details"]')?.focus()
  }

  /**
   * Lists the newest `SHOWN` records that match the search, and shows the first `limit` of them.
   * Items are kept, keyed by record, and one that is not shown is hidden, not removed: a keystroke
   * in the search only hides and shows items (an item is built the first time its record is
   * shown), and a keyboard user's focus (and a text selection in raw JSON) survives updates to
   * other records. An item is rebuilt when its record changed; focus then moves to the same
   * button of its new item.
   */
  function render(): void {
    const ordered = [...records.values()].sort((a, b) => Number(b.id) - Number(a.id))
    const active = document.activeElement
    let refocus: { element: HTMLElement; action: string } | undefined
    const next = new Map<string, { version: number; expanded: boolean; element: HTMLElement }>()
    const elements: HTMLElement[] = []
    shown = []
    let count = 0
    for (const record of ordered) {
      const listed = count < SHOWN && search.matches(record)
      if (listed) count++
      const visible = listed && count <= limit
      const expanded = open.has(record.id)
      let known = items.get(record.id)
      if (visible && !(known && known.version === record.version && known.expanded === expanded)) {
        const element = item(record)
        if (known && active instanceof HTMLElement && known.element.contains(active)) refocus = { element, action: active.dataset.action ?? 'details' }
        known = { version: record.version, expanded, element }
      }
      // Never shown yet: built when it is.
      if (known === undefined) continue
      if (known.element.hidden === visible) known.element.hidden = !visible
      if (visible) shown.push(known.element)
      next.set(record.id, known)
      elements.push(known.element)
    }
    items = next
    empty.textContent = records.size === 0 ? 'No messages yet.' : 'No message matches the search.'
    empty.hidden = count > 0
    more.hidden = count <= limit
    moreText.textContent = more.hidden ? '' : `Showing the newest ${limit} of ${count}.`
    const further = Math.min(PAGE, count - limit)
    moreButton.textContent = more.hidden ? '' : `Show ${further} more message${further === 1 ? '' : 's'}`
    const kept = new Set<Element>(elements)
    for (const child of [...list.children]) if (!kept.has(child)) child.remove()
    // Insert each item before the first one that follows it; items already in place do not move.
    let cursor = list.firstElementChild
    for (const element of elements) {
      if (element === cursor) cursor = cursor.nextElementSibling
      else list.insertBefore(element, cursor)
    }
    if (refocus) {
      const { element, action } = refocus
      ;(element.querySelector<HTMLElement>(`[data-action="${action}"]`) ?? element.querySelector<HTMLElement>('[data-action="details"]'))?.focus()
    }
  }

  function receive(answer: MessagesAnswer): void {
    // Another process answers (the collector restarted): what the page had is gone there, and its
    // ids and versions start again, so old and new records must not mix.
    const restarted = boot !== '' && answer.boot !== boot
    if (restarted) {
      records.clear()
      found = new Set()
      // Its ids and versions repeat the old ones: no item on the page may stand for a new record.
      items = new Map()
    }
    for (const record of answer.messages) records.set(record.id, record)
    const thinned = answer.unlisted ?? 0
    unlisted.hidden = thinned === 0
    unlisted.textContent = thinned === 0 ? '' : `${thinned} successful ${thinned === 1 ? 'delivery' : 'deliveries'} not listed: past 100 messages a second, successes are thinned out; every failure and retry is listed.`
    // The collector keeps a bounded history: forget what it no longer has (but what a search found).
    const ids = [...records.keys()].filter((id) => !found.has(id)).sort((a, b) => Number(a) - Number(b))
    for (const id of ids.slice(0, Math.max(0, ids.length - SHOWN))) records.delete(id)
    if (answer.messages.length > 0 || boot === '' || restarted) render()
    version = answer.version
    boot = answer.boot
    problem.hidden = true
  }

  /**
   * Follows the collector's event stream; when it ends or fails, follows it again a second later,
   * until `stop` (a 401 signs the page out: main.ts).
   */
  async function follow(): Promise<void> {
    const { signal } = stopping
    while (!signal.aborted) {
      try {
        await apiStream(`v1/admin/messages/stream?since=${version}${boot === '' ? '' : `&boot=${encodeURIComponent(boot)}`}`, (data) => receive(data as MessagesAnswer), signal)
      } catch (error) {
        if (!(error instanceof ApiFailure)) throw error
        if (signal.aborted) return
        problem.textContent = error.problem.message
        problem.hidden = false
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }

  const element = h('section', { 'aria-labelledby': 'live-heading' },
    h('h2', { id: 'live-heading' }, 'Live events'),
    search.element,
    problem,
    retryProblem,
    unlisted,
    list,
    more,
    empty,
  )
  return {
    element,
    start() {
      void follow()
    },
    stop() {
      stopping.abort()
      search.stop()
    },
    /** Shows the records of one type (or `AUDIENCE`), and brings the search into view. */
    show: search.only,
  }
}
