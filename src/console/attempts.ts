/**
 * A message's deliveries as the page shows them: each attempt in words (which URL accepted it,
 * what the others answered and whether they are asked again), then a table of every URL's
 * status, duration and the first KB of the receiver's answer. The words follow the destination's
 * rule (src/webhooks/attempt.ts): an attempt POSTs to every URL still worth trying at once; the
 * first URL to answer 2xx delivers the message and no URL is asked again; without one, the URLs
 * that timed out, could not be reached, or answered 408, 429 or 5xx are retried, and those that
 * answered anything else are not.
 */
import type { AttemptRecord, MessageRecord } from './api.js'
import { h } from './dom.js'

type UrlOutcome = AttemptRecord['results'][number]

const time = (iso: string) => new Date(iso).toLocaleTimeString()
const ENDS = 'the first URL to accept a message ends its delivery'
const PENDING = new Set(['no answer yet', 'still answering (another URL accepted the message)'])

const accepted = (r: UrlOutcome) => r.status !== undefined && r.status >= 200 && r.status < 300 && r.error === undefined
/** As the retry policy has it (src/transport/retry-policy.ts): what a URL's failure leads to. */
function retryable(r: UrlOutcome): boolean {
  if (r.status !== undefined) return r.status === 408 || r.status === 429 || (r.status >= 500 && r.status < 600)
  // No status: a timeout or a network error is retried; a refused certificate is not.
  return !/certificate|TLS/i.test(r.error ?? '')
}

function what(r: UrlOutcome): string {
  if (r.error !== undefined && PENDING.has(r.error)) return r.error === 'no answer yet' ? 'has not answered yet' : 'was still answering'
  return r.status !== undefined ? `answered ${r.status}` : `failed (${r.error ?? 'no answer'})`
}

/**
 * Attempt `attempt` in words. `name(url)`: "URL 2", by the source's order; `last`: the newest
 * attempt of a delivery whose outcome is `outcome`.
 */
export function attemptWords(attempt: AttemptRecord, name: (url: string) => string, last: boolean, outcome: string): string {
  const by = attempt.results.find(accepted)
  const others = attempt.results.filter((r) => r !== by)
  if (by !== undefined) {
    const rest = others.map((r) => (accepted(r) ? `${name(r.url)} also accepted it (${r.status})` : `${name(r.url)} ${what(r)} and is not retried: ${ENDS}`))
    return [`accepted by ${name(by.url)} (${by.status})`, ...rest].join('; ')
  }
  if (attempt.results.some((r) => r.error !== undefined && PENDING.has(r.error) && r.status === undefined)) {
    return attempt.results.map((r) => `${name(r.url)} ${what(r)}`).join('; ')
  }
  const parts = attempt.results.map((r) => `${name(r.url)} ${what(r)}: ${retryable(r) ? 'worth another attempt' : 'final, not asked again'}`)
  const next = !last ? 'another attempt followed' : outcome === 'failed' ? 'no retry: the delivery failed' : outcome === 'retrying' ? 'retried' : ''
  return [...parts, next].filter(Boolean).join('; ')
}

const duration = (r: UrlOutcome) => (r.durationMs === undefined ? '' : `${r.durationMs} ms`)
const statusOf = (r: UrlOutcome) => (r.status !== undefined ? `${r.status}${r.error === undefined ? '' : `: ${r.error}`}` : (r.error ?? 'no answer yet'))

/** The words and table of `record`'s attempts; `label` names the record. */
export function attemptsView(record: MessageRecord, label: string): HTMLElement {
  const { delivery } = record
  if (delivery.attempts.length === 0) return h('p', {}, 'No attempt yet.')
  // URLs numbered by the source's order: the first attempt kept went to every URL.
  const order = delivery.attempts[0].results.map((r) => r.url)
  const name = (url: string) => `URL ${order.indexOf(url) + 1 || '?'}`
  const newest = delivery.attempts.length - 1
  return h('div', { class: 'deliveries' },
    // Paragraphs, not a list: the message's own item must hold no other list items.
    h('div', { class: 'attempt-words', role: 'group', 'aria-label': `Attempts of ${label} in words` },
      ...delivery.attempts.map((attempt, i) =>
        h('p', {}, `Attempt ${attempt.attempt} at ${time(attempt.at)}: ${attemptWords(attempt, name, i === newest, delivery.outcome)}.`))),
    h('table', { class: 'attempts' },
      h('caption', {}, `Deliveries of ${label}`),
      h('thead', {}, h('tr', {}, ...['Attempt', 'Time', 'URL', 'Address', 'Status or error', 'Duration', 'Answer (first KB)'].map((t) => h('th', { scope: 'col' }, t)))),
      h('tbody', {}, ...delivery.attempts.flatMap((attempt) => attempt.results.map((r) =>
        h('tr', {},
          h('td', {}, attempt.attempt),
          h('td', {}, time(attempt.at)),
          h('td', {}, name(r.url)),
          h('td', {}, r.url),
          h('td', {}, statusOf(r)),
          h('td', {}, duration(r)),
          h('td', {}, r.answer === undefined ? '' : h('code', { class: 'answer' }, r.answer))),
      ))),
    ),
  )
}
